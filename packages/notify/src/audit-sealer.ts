import { type AskUserDatabase, type AuditKey, sealAudit } from '@x/askuser';

/** How often the sealer seals when poked, at most, by default. */
export const SEAL_EVERY_MS = 10_000;

/** Options of {@link AuditSealer}. */
export interface AuditSealerOptions {
  /** The database of `@x/askuser`'s audit log, or how to get it each time. */
  db: AskUserDatabase | (() => AskUserDatabase);
  /** The audit key; undefined (or a function that gives undefined): there is nothing to seal. */
  key: AuditKey | undefined | (() => AuditKey | undefined);
  /** The least time between two seals, in ms; default {@link SEAL_EVERY_MS}. */
  everyMs?: number;
  /** A seal that failed (the database away); the next one seals what it missed. Default ignored. */
  onError?: (error: unknown) => void;
}

/**
 * Seals the audit log's changed chains into its global chain (`@x/askuser`'s `sealAudit`):
 * on {@link run}'s interval, or when {@link poke}d (at most once per `everyMs`, a while after
 * the activity that asked for it), and once more when it stops.
 *
 * @example
 * const sealer = new AuditSealer({ db, key: process.env.AUDIT_KEY });
 * const stop = new AbortController();
 * const loop = sealer.run(stop.signal);
 * // ...
 * stop.abort();
 * await loop;
 */
export class AuditSealer {
  readonly #options: AuditSealerOptions;
  readonly #everyMs: number;
  #last = 0;
  #timer: NodeJS.Timeout | undefined;
  #sealing: Promise<void> = Promise.resolve();
  readonly #closed = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(options: AuditSealerOptions) {
    this.#options = options;
    this.#everyMs = options.everyMs ?? SEAL_EVERY_MS;
  }

  #key(): AuditKey | undefined {
    const { key } = this.#options;
    return typeof key === 'function' ? key() : key;
  }

  /** Something may have been written to the log: seal now, or when `everyMs` has passed. */
  poke(): void {
    if (this.#timer !== undefined || this.#key() === undefined) return;
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

  /** Seals every `everyMs` until `signal` aborts or {@link close} is called, then once more. */
  run(signal?: AbortSignal): Promise<void> {
    const stop = signal ? AbortSignal.any([signal, this.#closed.signal]) : this.#closed.signal;
    this.#loop ??= this.#run(stop);
    return this.#loop;
  }

  /** Stops {@link run} and waits for its last seal. */
  async close(): Promise<void> {
    this.#closed.abort();
    await (this.#loop ?? this.flush());
  }

  async #run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.#seal();
      // An abort during the seal fired already: no listener would hear it.
      if (signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.#everyMs);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
    await this.flush();
  }

  #seal(): Promise<void> {
    this.#sealing = this.#sealing.then(async () => {
      const key = this.#key();
      if (key === undefined) return;
      this.#last = Date.now();
      const { db } = this.#options;
      await sealAudit(typeof db === 'function' ? db() : db, { key }).catch((error: unknown) =>
        this.#options.onError?.(error),
      );
    });
    return this.#sealing;
  }
}
