import type { IncomingMessage } from 'node:http';
import { appendAuditEvent } from '@x/askuser';
import type { ExecutiveStorage } from '@x/executive';
import { ApprovalCenterError } from '../errors.js';

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

/** Failed sign-ins counted per source address and per operator name. */
export interface SignInLimiters {
  source: FailureLimiter;
  name: FailureLimiter;
}

/** Each request's client address, as the server found it (through a trusted proxy). */
const sources = new WeakMap<IncomingMessage, string>();

/** Remembers where `req` came from: its client, when a trusted proxy forwarded it. */
export function rememberSource(req: IncomingMessage, address: string): void {
  sources.set(req, address);
}

/**
 * The address a request came from, as the limiters count it (and the audit log records it):
 * the client a trusted proxy named (`--trust-proxy`), else the connection's.
 */
export function sourceOf(req: IncomingMessage): string {
  return sources.get(req) ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * @throws {ApprovalCenterError} `rate_limited` (429, with `retryAfter` in seconds) while
 *   `source`, or the operator `name` a sign-in is for, has failed too often: nothing is
 *   checked until the oldest failure leaves the window.
 */
export function refuseWhileLimited(limiters: SignInLimiters, source: string, name?: string): void {
  const waitMs = Math.max(
    limiters.source.retryAfterMs(source),
    name === undefined ? 0 : limiters.name.retryAfterMs(name),
  );
  if (waitMs <= 0) return;
  const seconds = Math.ceil(waitMs / 1000);
  throw new ApprovalCenterError(
    'rate_limited',
    `too many failed sign-ins ${name === undefined ? 'from this address' : `from this address or as ${name}`}: try again in ${seconds} s`,
    { retryAfter: seconds },
  );
}

/**
 * Counts a failed sign-in against its source, and the operator it named when it named one.
 */
export function countFailedSignIn(limiters: SignInLimiters, source: string, name?: string): void {
  limiters.source.fail(source);
  if (name !== undefined) limiters.name.fail(name);
}

/** Where `sign-in-failed` (and `signed-in`) entries are appended. */
export type SignInAudit = Pick<ExecutiveStorage, 'db' | 'auditKey'>;

/** A sign-in that failed: from where, as whom (when known), why, and how it was tried. */
export interface FailedSignIn {
  source: string;
  name?: string | undefined;
  why: string;
  signedInWith: 'key' | 'oidc';
}

/**
 * Counts a failed sign-in against its source (and the operator it named) and records it in
 * the audit log as `sign-in-failed`, when the server keeps one.
 */
export async function recordFailedSignIn(
  signIn: { limiters: SignInLimiters; audit?: SignInAudit | undefined },
  failure: FailedSignIn,
): Promise<void> {
  const { source, name, why, signedInWith } = failure;
  countFailedSignIn(signIn.limiters, source, name);
  const key = signIn.audit?.auditKey();
  if (key === undefined || !signIn.audit) return;
  const data = { event: 'sign-in-failed', source, ...(name ? { name } : {}), why, signedInWith };
  await appendAuditEvent(signIn.audit.db, data, { key });
}
