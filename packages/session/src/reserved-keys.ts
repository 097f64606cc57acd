/** Runtime-state key under which the plan's todo list is checkpointed. */
export const PLAN_TODOS_KEY = '_plan_todos';
/** Runtime-state key under which the plan document (draft text) is checkpointed. */
export const PLAN_DOCUMENT_KEY = '_plan_document';
/**
 * Legacy key older checkpoints carried (the knowledge namespace now lives elsewhere). It is
 * reserved so that loading such a checkpoint never exposes it as a user key.
 */
export const LEGACY_SEARCH_NAMESPACE_KEY = '_search_namespace';

/** Every key the session manager owns in checkpoint runtime state. */
export const RESERVED_RUNTIME_STATE_KEYS: ReadonlySet<string> = new Set([
  PLAN_TODOS_KEY,
  PLAN_DOCUMENT_KEY,
  LEGACY_SEARCH_NAMESPACE_KEY,
]);

/**
 * True for keys owned by the session manager's export (plan keys and the legacy
 * `_search_namespace`), which are never user state.
 */
export function isReservedRuntimeStateKey(key: string): boolean {
  return RESERVED_RUNTIME_STATE_KEYS.has(key);
}

/**
 * Removes the reserved keys (plan keys and legacy ones) from a runtime-state record, in
 * place, so they are not exposed through user-facing `stateGet` after a load.
 */
export function stripPlanKeys(state: Record<string, unknown>): void {
  for (const key of RESERVED_RUNTIME_STATE_KEYS) delete state[key];
}
