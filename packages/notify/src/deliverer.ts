import type { NotificationOutbox, NotificationRecord } from '@x/askuser';
import { backoffMs } from '@x/postgres-kit';
import { NotifyError } from './errors.js';
import type { Sender } from './sender.js';

/** How one delivery attempt ended, for a caller's report. */
export type DeliveryEvent =
  | {
      type: 'notification-delivered';
      id: string;
      eventId: string;
      kind: string;
      channel: string;
      attempt: number;
    }
  | {
      type: 'notification-retrying' | 'notification-failed';
      id: string;
      eventId: string;
      kind: string;
      channel: string;
      attempt: number;
      error: string;
      retryInMs?: number;
    };

/** Options of {@link Deliverer}: everything it needs, nothing read from the environment. */
export interface DelivererOptions {
  /** The outbox to drain (`new NotificationOutbox(db)`), or how to get it each time. */
  outbox: NotificationOutbox | (() => NotificationOutbox);
  /** The sender of each channel, by the channel names the outbox rows carry. */
  senders: Readonly<Record<string, Sender>>;
  /** The sender of a channel {@link senders} does not name; default: the attempt fails. */
  fallback?: Sender;
  /** Attempts before a notification is failed (the dead letter); default 8. */
  maxAttempts?: number;
  /** The first wait before an attempt is repeated, in ms; doubling, with jitter; default 1 s. */
  baseMs?: number;
  /** The longest wait between attempts, in ms; default an hour. */
  maxMs?: number;
  /** How long a claimed notification stays away from other deliverers, in ms; default 60 s. */
  leaseMs?: number;
  /** Notifications claimed and sent side by side; default 16. */
  batch?: number;
  /** How often {@link Deliverer.run} looks when nothing woke it (others enqueue too); default 5 s. */
  pollMs?: number;
  /** Each attempt's outcome. */
  onDelivery?: (event: DeliveryEvent) => void;
  /** A failure of the loop itself (the database away), which it waits out; default ignored. */
  onError?: (error: unknown) => void;
}

const HOUR = 3600e3;

function positive(name: string, value: number | undefined, fallback: number): number {
  const chosen = value ?? fallback;
  if (!Number.isFinite(chosen) || chosen < (name === 'baseMs' ? 0 : 1)) {
    throw new NotifyError('invalid_argument', `${name} must be a positive number, not ${value}`);
  }
  return chosen;
}

/** Why an attempt failed, as the outbox row keeps it (without a package's origin). */
const reasonOf = (thrown: unknown) =>
  NotifyError.is(thrown)
    ? thrown.reason
    : thrown instanceof Error
      ? thrown.message
      : String(thrown);

/**
 * Delivers `@x/askuser`'s notification outbox at least once: claims due notifications with a
 * short statement, sends them with no transaction open, then records each outcome
 * (delivered, due again after a backoff, or failed after `maxAttempts`). A deliverer that
 * dies mid-send leaves its claims due again when their lease runs out, so a receiver may see
 * an event twice, never none: the event id (`webhook-id`, the Message-ID) is the same each
 * time, for the receiver to drop duplicates.
 *
 * @example
 * const deliverer = new Deliverer({
 *   outbox: new NotificationOutbox(db),
 *   senders: { webhook: webhookSender({ url, secrets: [secret] }) },
 * });
 * const loop = deliverer.run();
 * // ...
 * await deliverer.close();
 */
export class Deliverer {
  readonly #options: DelivererOptions;
  readonly #maxAttempts: number;
  readonly #baseMs: number;
  readonly #closed = new AbortController();
  #wake: () => void = () => {};
  #loop: Promise<void> | undefined;

  constructor(options: DelivererOptions) {
    this.#options = options;
    this.#maxAttempts = positive('maxAttempts', options.maxAttempts, 8);
    this.#baseMs = positive('baseMs', options.baseMs, 1_000);
    positive('leaseMs', options.leaseMs, 60_000);
    positive('batch', options.batch, 16);
  }

  #outbox(): NotificationOutbox {
    const { outbox } = this.#options;
    return typeof outbox === 'function' ? outbox() : outbox;
  }

  /** Delivers what is due now, batch by batch, until nothing is; returns how many were tried. */
  async deliverDue(): Promise<number> {
    let tried = 0;
    for (;;) {
      const claimed = await this.#outbox().claimDue(
        this.#options.batch ?? 16,
        this.#options.leaseMs ?? 60_000,
      );
      if (claimed.length === 0) return tried;
      tried += claimed.length;
      await Promise.all(claimed.map((n) => this.#attempt(n)));
    }
  }

  /** Something was enqueued in this process: look now rather than at the next poll. */
  poke(): void {
    this.#wake();
  }

  /**
   * Delivers until `signal` aborts or {@link close} is called: what is due, then sleeps until
   * the next is due, a {@link poke}, or `pollMs`. A failure of the database is waited out
   * (reported to `onError`).
   */
  run(signal?: AbortSignal): Promise<void> {
    this.#loop ??= this.#run(signal);
    return this.#loop;
  }

  /** Stops {@link run} and waits for its attempts in flight to be recorded. */
  async close(): Promise<void> {
    this.#closed.abort();
    this.#wake();
    await this.#loop;
  }

  async #run(signal: AbortSignal | undefined): Promise<void> {
    const stop = signal ? AbortSignal.any([signal, this.#closed.signal]) : this.#closed.signal;
    const wake = () => this.#wake();
    stop.addEventListener('abort', wake, { once: true });
    const pollMs = this.#options.pollMs ?? 5_000;
    while (!stop.aborted) {
      let waitMs = pollMs;
      try {
        await this.deliverDue();
        const next = await this.#outbox().nextDue();
        if (next) waitMs = Math.max(0, Math.min(pollMs, next.getTime() - Date.now()));
      } catch (error) {
        this.#options.onError?.(error);
      }
      if (stop.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    stop.removeEventListener('abort', wake);
  }

  async #attempt(n: NotificationRecord): Promise<void> {
    const outbox = this.#outbox();
    const said = {
      id: n.id,
      eventId: n.eventId,
      kind: n.kind,
      channel: n.channel,
      attempt: n.attempts,
    };
    const send = this.#options.senders[n.channel] ?? this.#options.fallback;
    try {
      if (!send) {
        throw new NotifyError('undelivered', `no sender is given for the channel ${n.channel}`, {
          channel: n.channel,
        });
      }
      await send(n);
    } catch (thrown) {
      const error = reasonOf(thrown);
      if (n.attempts >= this.#maxAttempts) {
        await outbox.attemptFailed(n.id, error, undefined);
        this.#options.onDelivery?.({ type: 'notification-failed', ...said, error });
      } else {
        const retryInMs = backoffMs(n.attempts - 1, {
          baseMs: this.#baseMs,
          maxMs: this.#options.maxMs ?? HOUR,
        });
        await outbox.attemptFailed(n.id, error, retryInMs);
        this.#options.onDelivery?.({ type: 'notification-retrying', ...said, error, retryInMs });
      }
      return;
    }
    await outbox.delivered(n.id);
    this.#options.onDelivery?.({ type: 'notification-delivered', ...said });
  }
}
