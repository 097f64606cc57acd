import type { NotificationRecord } from '@x/askuser';
import {
  type DelivererOptions,
  type DeliveryEvent,
  Deliverer as NotifyDeliverer,
  webhookSender,
} from '@x/notify';
import { type Env, setting, VARIABLES } from '../config/index.js';
import type { Storage } from '../storage/index.js';
import { emailSender } from './email.js';
import type { Sender } from './sender.js';
import { slackSender } from './slack.js';

export type { DeliveryEvent } from '@x/notify';
export type { Sender } from './sender.js';

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
    senders.webhook = webhookSender(target);
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

/**
 * @x/notify's deliverer over the runner's storage: the runner's senders given the storage
 * they need, and a notification of a channel the environment does not configure failed with
 * the variables to set.
 */
export class Deliverer {
  readonly #storage: () => Storage;
  readonly #options: DeliveryOptions;
  #running: NotifyDeliverer | undefined;
  #once: NotifyDeliverer | undefined;

  constructor(storage: () => Storage, options: DeliveryOptions) {
    this.#storage = storage;
    this.#options = options;
  }

  #make(loop: Pick<DelivererOptions, 'pollMs' | 'onError'> = {}): NotifyDeliverer {
    const storage = this.#storage;
    const senders = Object.fromEntries(
      Object.entries(this.#options.senders).map(([channel, send]) => [
        channel,
        (n: NotificationRecord) => send(n, storage()),
      ]),
    );
    const { maxAttempts, baseMs, leaseMs, batch, onDelivery } = this.#options;
    return new NotifyDeliverer({
      outbox: () => storage().notifications(),
      senders,
      fallback: async (n) => {
        throw new Error(
          `no ${n.channel} channel is configured (RUNNER_WEBHOOK_URL, RUNNER_SMTP_URL and RUNNER_EMAIL_TO)`,
        );
      },
      maxAttempts,
      baseMs,
      ...(leaseMs === undefined ? {} : { leaseMs }),
      ...(batch === undefined ? {} : { batch }),
      ...(onDelivery ? { onDelivery } : {}),
      ...loop,
    });
  }

  /** Delivers what is due now, batch by batch, until nothing is; returns how many were tried. */
  deliverDue(): Promise<number> {
    this.#once ??= this.#make();
    return (this.#running ?? this.#once).deliverDue();
  }

  /** Something was enqueued in this process: look now rather than at the next poll. */
  poke(): void {
    this.#running?.poke();
  }

  /**
   * Delivers until `stop` resolves: what is due, then sleeps until the next is due, a poke,
   * or `pollMs` (other processes enqueue too). A database failure is waited out.
   */
  async run(stop: Promise<void>, pollMs: number, onError: (error: unknown) => void) {
    const stopped = new AbortController();
    void stop.then(() => stopped.abort());
    this.#running = this.#make({ pollMs, onError });
    await this.#running.run(stopped.signal);
  }
}
