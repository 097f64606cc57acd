/** How many failures a key (a source address, an operator's name) may have within a window. */
export interface Limit {
  max: number;
  windowMs: number;
}

/** Keys remembered at most: beyond it the oldest is forgotten, so a flood cannot grow memory. */
const MAX_KEYS = 10_000;

/**
 * Counts failures per key in a sliding window, in this process's memory: a key with `max`
 * failures in the last `windowMs` is blocked until the oldest of them leaves the window.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly limit: Limit) {}

  /** Milliseconds until `key` may try again, or 0 when it may now. */
  retryAfterMs(key: string, now = Date.now()): number {
    const recent = this.recent(key, now);
    if (recent.length < this.limit.max) return 0;
    return (recent[recent.length - this.limit.max] ?? now) + this.limit.windowMs - now;
  }

  /** Records a failure of `key`. */
  fail(key: string, now = Date.now()): void {
    const recent = [...this.recent(key, now), now].slice(-this.limit.max);
    this.failures.delete(key);
    this.failures.set(key, recent);
    if (this.failures.size > MAX_KEYS) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  private recent(key: string, now: number): number[] {
    return (this.failures.get(key) ?? []).filter((at) => at > now - this.limit.windowMs);
  }
}
