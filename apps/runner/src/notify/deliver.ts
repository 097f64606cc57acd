import { type Env, setting, VARIABLES } from '../config/index.js';
import type { Storage } from '../storage/index.js';
import type { NotificationRecord } from '../storage/notifications.js';
import { emailSender } from './email.js';
import type { Sender } from './sender.js';
import { slackSender } from './slack.js';
import { sendWebhook } from './webhook.js';

export type { Sender } from './sender.js';

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

/** Options of {@link Deliverer}. */
export interface DeliveryOptions {
  /** The sender of each channel; a notification of a channel without one fails its attempt. */
  senders: Readonly<Record<string, Sender>>;
  /** Attempts before a notification is failed (the dead letter). */
  maxAttempts: number;
  /** The first wait before an attempt is repeated, in ms; doubling, with jitter. */
  baseMs: number;
  /** How long a claimed notification stays away from other deliverers, in ms; default 60 s. */
  leaseMs?: number;
  /** Notifications claimed and sent side by side. */
  batch?: number;
  onDelivery?: (event: DeliveryEvent) => void;
}

const HOUR = 3600e3;
const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * The senders the environment configures: the webhook when RUNNER_WEBHOOK_URL is set, email
 * when RUNNER_SMTP_URL and RUNNER_EMAIL_TO are.
 */
export function sendersFromEnv(env?: Env): Record<string, Sender> {
  const senders: Record<string, Sender> = {};
  const url = setting(VARIABLES.RUNNER_WEBHOOK_URL, env);
  if (url) {
    const target = {
      url,
      secrets: setting(VARIABLES.RUNNER_WEBHOOK_SECRET, env) ?? [],
      timeoutMs: WEBHOOK_TIMEOUT_MS,
    };
    senders.webhook = (n) => sendWebhook(target, n.eventId, n.payload);
  }
  const smtp = setting(VARIABLES.RUNNER_SMTP_URL, env);
  const to = setting(VARIABLES.RUNNER_EMAIL_TO, env);
  if (smtp && to) {
    senders.email = emailSender({
      url: smtp,
      to,
      from: setting(VARIABLES.RUNNER_EMAIL_FROM, env),
      publicUrl: setting(VARIABLES.RUNNER_PUBLIC_URL, env),
      decisionKey: setting(VARIABLES.RUNNER_DECISION_KEY, env),
    });
  }
  const slackToken = setting(VARIABLES.RUNNER_SLACK_TOKEN, env);
  const channel = setting(VARIABLES.RUNNER_SLACK_CHANNEL, env);
  if (slackToken && channel) {
    const apiUrl = setting(VARIABLES.RUNNER_SLACK_API_URL, env);
    senders.slack = slackSender({ apiUrl, token: slackToken, channel });
  }
  return senders;
}

/** The delivery options of the environment (RUNNER_WEBHOOK_*, RUNNER_NOTIFY_*: attempts, backoff, lease). */
export function deliveryFromEnv(env?: Env): DeliveryOptions {
  return {
    senders: sendersFromEnv(env),
    maxAttempts: setting(VARIABLES.RUNNER_NOTIFY_MAX_ATTEMPTS, env),
    baseMs: setting(VARIABLES.RUNNER_NOTIFY_BACKOFF_MS, env),
    leaseMs: setting(VARIABLES.RUNNER_NOTIFY_LEASE_MS, env),
  };
}

/** The wait before attempt `attempt + 1`: doubling from `baseMs` up to an hour, half of it random. */
export function backoffMs(baseMs: number, attempt: number): number {
  const full = Math.min(HOUR, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(full / 2 + (Math.random() * full) / 2);
}

/**
 * Delivers the outbox at least once: claims due notifications with a short statement, sends
 * them with no transaction open, then records each outcome (delivered, due again after a
 * backoff, or failed after `maxAttempts`). A deliverer that dies mid-send leaves its claims
 * due again when their lease runs out, so a receiver may see an event twice, never none:
 * it keeps `webhook-id`, the event id, to drop duplicates.
 */
export class Deliverer {
  #wake: () => void = () => {};

  constructor(
    private readonly storage: () => Storage,
    private readonly options: DeliveryOptions,
  ) {}

  /** Delivers what is due now, batch by batch, until nothing is; returns how many were tried. */
  async deliverDue(): Promise<number> {
    let tried = 0;
    for (;;) {
      const claimed = await this.storage()
        .notifications()
        .claimDue(this.options.batch ?? 16, this.options.leaseMs ?? 60_000);
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
   * Delivers until `stop` resolves: what is due, then sleeps until the next is due, a poke,
   * or `pollMs` (other processes enqueue too). A database failure is waited out.
   */
  async run(stop: Promise<void>, pollMs: number, onError: (error: unknown) => void) {
    let stopped = false;
    void stop.then(() => {
      stopped = true;
      this.#wake();
    });
    while (!stopped) {
      let waitMs = pollMs;
      try {
        await this.deliverDue();
        const next = await this.storage().notifications().nextDue();
        if (next) waitMs = Math.max(0, Math.min(pollMs, next.getTime() - Date.now()));
      } catch (error) {
        onError(error);
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async #attempt(n: NotificationRecord): Promise<void> {
    const store = this.storage().notifications();
    const said = {
      id: n.id,
      eventId: n.eventId,
      kind: n.kind,
      channel: n.channel,
      attempt: n.attempts,
    };
    const send = this.options.senders[n.channel];
    try {
      if (!send) {
        throw new Error(
          `no ${n.channel} channel is configured (RUNNER_WEBHOOK_URL, RUNNER_SMTP_URL and RUNNER_EMAIL_TO)`,
        );
      }
      await send(n, this.storage());
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown.message : String(thrown);
      if (n.attempts >= this.options.maxAttempts) {
        await store.attemptFailed(n.id, error, undefined);
        this.options.onDelivery?.({ type: 'notification-failed', ...said, error });
      } else {
        const retryInMs = backoffMs(this.options.baseMs, n.attempts);
        await store.attemptFailed(n.id, error, retryInMs);
        this.options.onDelivery?.({ type: 'notification-retrying', ...said, error, retryInMs });
      }
      return;
    }
    await store.delivered(n.id);
    this.options.onDelivery?.({ type: 'notification-delivered', ...said });
  }
}
