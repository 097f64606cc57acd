/**
 * How long a worker holds a run unless it renews its lease, and how a failed attempt is
 * retried (the run queue's retry policy takes these fields).
 *
 * @example
 * const lease: LeasePolicy = { leaseMs: 60_000, retry: { maxAttempts: 5, baseMs: 1_000 } };
 */
export interface LeasePolicy {
  /** How long a claim holds a run unless renewed, in ms. */
  leaseMs: number;
  retry: {
    /** Attempts a run gets before it fails; a claim taken from a dead worker counts. */
    maxAttempts: number;
    /** The wait after the first failed attempt, in ms; it doubles after each, with jitter. */
    baseMs: number;
    /** How the limit is named in the reason of a run given up (e.g. the variable that sets it). */
    limitName?: string;
  };
}
