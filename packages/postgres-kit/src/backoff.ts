/** Options of {@link backoffMs}. */
export interface BackoffOptions {
  /** The wait after the first failure (it doubles after each); default 1 s. */
  baseMs?: number;
  /** The longest wait; default 5 minutes. */
  maxMs?: number;
}

const DEFAULT_BASE_MS = 1_000;
const DEFAULT_MAX_MS = 300_000;

/**
 * The wait after the failed attempt number `failed` (0 for the first): exponential, capped at
 * `maxMs`, with jitter over its upper half so that workers that failed together do not all
 * come back at the same moment.
 *
 * @example
 * const retryInMs = backoffMs(attempt - 1, { baseMs: 2_000, maxMs: 3_600_000 });
 */
export function backoffMs(
  failed: number,
  { baseMs = DEFAULT_BASE_MS, maxMs = DEFAULT_MAX_MS }: BackoffOptions = {},
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(failed, 0), 20));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
