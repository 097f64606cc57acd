import { AuditSealer as NotifyAuditSealer } from '@x/notify';
import type { Storage } from '../storage/index.js';

/** How often the wake loop seals the conversations' chains into the global one, at most. */
export const SEAL_EVERY_MS = 10_000;

/**
 * @x/notify's audit sealer over the runner's storage, for a wake loop: poked after activity,
 * flushed when the loop ends. Does nothing without an audit key.
 */
export class AuditSealer extends NotifyAuditSealer {
  constructor(storage: () => Storage, everyMs = SEAL_EVERY_MS) {
    super({ db: () => storage().db, key: () => storage().auditKey(), everyMs });
  }
}
