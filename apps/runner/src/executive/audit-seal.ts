import { sealAudit } from '@x/askuser';
import type { Storage } from '../storage/index.js';

/** How often the wake loop seals the conversations' chains into the global one, at most. */
export const SEAL_EVERY_MS = 10_000;

/**
 * Seals the audit log's changed chains into its global chain (`sealAudit`) for a wake loop:
 * at most once per `everyMs`, a while after the activity that asked for it, and once more
 * when the loop ends. Does nothing without an audit key.
 */
export class AuditSealer {
  readonly #storage: () => Storage;
  readonly #everyMs: number;
  #last = 0;
  #timer: NodeJS.Timeout | undefined;
  #sealing: Promise<void> = Promise.resolve();

  constructor(storage: () => Storage, everyMs = SEAL_EVERY_MS) {
    this.#storage = storage;
    this.#everyMs = everyMs;
  }

  /** Something may have been written to the log: seal now, or when `everyMs` has passed. */
  poke(): void {
    if (this.#timer !== undefined || this.#storage().auditKey() === undefined) return;
    const wait = Math.max(0, this.#last + this.#everyMs - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#seal();
    }, wait);
    // A loop that ends calls flush(): the timer keeps no process up.
    this.#timer.unref();
  }

  /** Seals what changed since the last seal, after the one in progress; for a loop's end. */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#seal();
  }

  #seal(): Promise<void> {
    this.#sealing = this.#sealing.then(async () => {
      const storage = this.#storage();
      const key = storage.auditKey();
      if (key === undefined) return;
      this.#last = Date.now();
      // A failed seal (the database away) loses nothing: the next one seals what it missed.
      await sealAudit(storage.db, { key }).catch(() => {});
    });
    return this.#sealing;
  }
}
