import { describe, expect, it } from 'vitest';
import { backoffMs } from './backoff.js';

describe('backoffMs', () => {
  it('doubles from baseMs, within the upper half of each step', () => {
    for (const [failed, ceiling] of [
      [0, 100],
      [1, 200],
      [3, 800],
    ] as const) {
      const wait = backoffMs(failed, { baseMs: 100 });
      expect(wait).toBeGreaterThanOrEqual(ceiling / 2);
      expect(wait).toBeLessThanOrEqual(ceiling);
    }
  });

  it('never waits longer than maxMs, however many attempts failed', () => {
    expect(backoffMs(1_000, { baseMs: 100, maxMs: 1_000 })).toBeLessThanOrEqual(1_000);
    expect(backoffMs(-3, { baseMs: 100 })).toBeLessThanOrEqual(100);
  });
});
