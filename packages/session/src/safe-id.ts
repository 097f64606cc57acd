// Kept byte-identical in @x/continuation and @x/session (check:imports compares them): one
// rule for the ids every store of either family accepts, so ids behave the same everywhere.

/** Longest id a store accepts (leaves room for suffixes within a 255-byte file name). */
export const MAX_ID_LENGTH = 200;

const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * True when `id` could be a plain file name of its own: 1 to {@link MAX_ID_LENGTH} ASCII
 * letters, digits, `.`, `_` and `-`, not starting with `.` (so no `.`, `..`, hidden temp
 * names, separators, NUL, spaces or drive letters).
 */
export function isSafeId(id: unknown): id is string {
  return typeof id === 'string' && id.length <= MAX_ID_LENGTH && SAFE_ID.test(id);
}

/** Why `id` is refused, as a message naming it as `kind`; `undefined` for a safe id. */
export function unsafeIdReason(kind: string, id: unknown): string | undefined {
  if (isSafeId(id)) return undefined;
  const shown = typeof id === 'string' ? JSON.stringify(id.slice(0, 80)) : `(a ${typeof id})`;
  const why =
    typeof id !== 'string' || id.length === 0
      ? 'is empty'
      : id.length > MAX_ID_LENGTH
        ? `is longer than ${MAX_ID_LENGTH} characters`
        : 'is not a safe id';
  return `${kind} ${shown} ${why}: use 1 to ${MAX_ID_LENGTH} letters, digits, '.', '_' and '-', not starting with '.'`;
}
