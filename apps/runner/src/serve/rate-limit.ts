import { countFailedSignIn, type SignInLimiters } from '@x/approval-center';
import { appendAuditEvent } from '@x/askuser';
import type { Storage } from '../storage/index.js';

/** A sign-in that failed: from where, as whom (when known), why, and how it was tried. */
interface FailedSignIn {
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
  storage: Storage,
  limiters: SignInLimiters,
  failure: FailedSignIn,
): Promise<void> {
  const { source, name, why, signedInWith } = failure;
  countFailedSignIn(limiters, source, name);
  const key = storage.auditKey();
  if (key === undefined) return;
  const data = { event: 'sign-in-failed', source, ...(name ? { name } : {}), why, signedInWith };
  await appendAuditEvent(storage.db, data, { key });
}
