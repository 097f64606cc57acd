import { describe, expect, it } from 'vitest';
import {
  ApprovalCenterError,
  countFailedSignIn,
  FailureLimiter,
  refuseWhileLimited,
} from '../src/index.js';

// Failed sign-ins per source and per name: a sliding window, and the refusal that says when.

describe('FailureLimiter', () => {
  it('blocks a key with max failures in the window until the oldest leaves it', () => {
    const limiter = new FailureLimiter({ max: 3, windowMs: 1_000 });
    limiter.fail('a', 0);
    limiter.fail('a', 100);
    expect(limiter.retryAfterMs('a', 200)).toBe(0);
    limiter.fail('a', 200);
    expect(limiter.retryAfterMs('a', 200)).toBe(800);
    expect(limiter.retryAfterMs('b', 200)).toBe(0);
    expect(limiter.retryAfterMs('a', 1_001)).toBe(0);
  });
});

describe('refuseWhileLimited', () => {
  const limiters = () => ({
    source: new FailureLimiter({ max: 2, windowMs: 60_000 }),
    name: new FailureLimiter({ max: 2, windowMs: 60_000 }),
  });

  it('refuses (429) a source or a name past its limit, saying when to try again', () => {
    const counted = limiters();
    countFailedSignIn(counted, '127.0.0.1', 'ada');
    expect(() => refuseWhileLimited(counted, '127.0.0.1', 'ada')).not.toThrow();
    countFailedSignIn(counted, '127.0.0.2', 'ada');
    let refused: unknown;
    try {
      refuseWhileLimited(counted, '127.0.0.3', 'ada');
    } catch (error) {
      refused = error;
    }
    expect(ApprovalCenterError.hasCode(refused, 'rate_limited')).toBe(true);
    const error = refused as ApprovalCenterError;
    expect(error.status).toBe(429);
    expect(error.retryAfter).toBeGreaterThan(0);
    expect(error.reason).toMatch(
      /^too many failed sign-ins from this address or as ada: try again in \d+ s$/,
    );
    // Without a name, only the address counts: this one has one failure.
    expect(() => refuseWhileLimited(counted, '127.0.0.1')).not.toThrow();
  });
});
