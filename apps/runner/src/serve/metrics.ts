import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { priorityLabel } from '@x/approval-center';
import type { ExecutiveTelemetry, RunEnding } from '@x/executive';
import { CHANNELS } from '@x/notify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Storage } from '../storage/index.js';

/** Why an answer is refused, as {@link ExecutiveTelemetry.answerRefused} counts it. */
const REFUSALS = ['conflict', 'not_found', 'forbidden', 'expired', 'usage'];

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A person's wait, from a second to a week (GenAI's tool buckets stop at 82 s). */
const HUMAN_BUCKETS = [
  1,
  5,
  15,
  30,
  MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  4 * HOUR,
  8 * HOUR,
  DAY,
  2 * DAY,
  4 * DAY,
  7 * DAY,
];
const RESUME_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, MINUTE];
const MODEL_BUCKETS = [
  0.01,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
];
/** A run spans its questions' waits: sub-second (no question) to a week. */
const RUN_BUCKETS = [0.1, 0.5, ...HUMAN_BUCKETS];

/**
 * The runner's Prometheus metrics: counters and histograms from the executive's events
 * (it is the process's {@link ExecutiveTelemetry}), gauges read from the database by a few
 * grouped statements when scraped. Labels stay few: kinds, priorities, statuses, outcomes,
 * model ids; never a conversation, run or token.
 */
export class RunnerMetrics implements ExecutiveTelemetry {
  readonly registry = new Registry();
  readonly #storage: () => Storage;
  readonly #pending = this.#gauge('runner_questions_pending', 'Questions waiting for an answer.', [
    'kind',
    'priority',
  ]);
  readonly #overdue = this.#gauge(
    'runner_questions_overdue',
    'Pending questions whose deadline passed and was not applied yet (no wake loop ran it).',
    ['kind'],
  );
  readonly #runs = this.#gauge('runner_runs', 'Runs in each status.', ['status']);
  readonly #leases = this.#gauge(
    'runner_leases_held',
    'Leases held now: running runs whose lease has not expired.',
  );
  // Only where there is a pool of this process's own (PostgreSQL reached directly).
  readonly #pool: { inUse: Gauge; size: Gauge } | undefined;
  readonly #humanWait = new Histogram({
    name: 'runner_human_wait_seconds',
    help: 'From a question asked to its answer (or its deadline applied), observed when a run resumes from it.',
    labelNames: ['kind', 'outcome'],
    buckets: HUMAN_BUCKETS,
    registers: [this.registry],
  });
  readonly #answerToResume = new Histogram({
    name: 'runner_answer_to_resume_seconds',
    help: "From a question's answer to the model call of the attempt that resumes from it.",
    buckets: RESUME_BUCKETS,
    registers: [this.registry],
  });
  readonly #modelCall = new Histogram({
    name: 'runner_model_call_duration_seconds',
    help: 'One model call of a run, retries of the provider call included.',
    labelNames: ['model', 'outcome'],
    buckets: MODEL_BUCKETS,
    registers: [this.registry],
  });
  readonly #runDuration = new Histogram({
    name: 'runner_run_duration_seconds',
    help: 'From a run started to its end (completed, failed, cancelled), its waits included.',
    labelNames: ['outcome'],
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });
  readonly #ended: Record<RunEnding, Counter> = {
    completed: this.#counter('runner_runs_completed_total', 'Runs completed.'),
    failed: this.#counter('runner_runs_failed_total', 'Runs failed after their retries.'),
    cancelled: this.#counter('runner_runs_cancelled_total', 'Runs cancelled (an answer, a stop).'),
  };
  readonly #expired = this.#counter(
    'runner_runs_expired_total',
    "Runs resumed at their question's deadline, with its default.",
  );
  readonly #retries = this.#counter(
    'runner_run_retries_total',
    'Failed attempts scheduled to be tried again.',
  );
  readonly #leasesLost = this.#counter(
    'runner_leases_lost_total',
    "Runs this process's workers lost the lease of.",
  );
  readonly #refused = new Counter({
    name: 'runner_answers_refused_total',
    help: 'Answers refused, by why: conflict (answered already), not_found, forbidden, expired, usage.',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  readonly #notifications = {
    delivered: new Counter({
      name: 'runner_notifications_delivered_total',
      help: 'Notifications the receiver accepted, by channel (webhook, email, slack).',
      labelNames: ['channel'],
      registers: [this.registry],
    }),
    failed: new Counter({
      name: 'runner_notifications_failed_total',
      help: 'Notifications failed for good (their attempts used up: the dead letter), by channel.',
      labelNames: ['channel'],
      registers: [this.registry],
    }),
  };

  /** `storage` is read at each scrape: the one in use then (a wake loop may reopen it). */
  constructor(storage: () => Storage) {
    this.#storage = storage;
    this.#pool = storage().poolUse
      ? {
          inUse: this.#gauge(
            'runner_db_pool_connections_in_use',
            "Connections of this process's PostgreSQL pool running a statement (the scrape's own excluded).",
          ),
          size: this.#gauge(
            'runner_db_pool_connections_max',
            "Size of this process's PostgreSQL pool.",
          ),
        }
      : undefined;
    for (const ending of Object.values(this.#ended)) ending.inc(0);
    // Each series from zero: `increase()` misses the first count of a series that starts at one.
    for (const channel of CHANNELS) {
      this.#notifications.delivered.inc({ channel }, 0);
      this.#notifications.failed.inc({ channel }, 0);
    }
    for (const reason of REFUSALS) this.#refused.inc({ reason }, 0);
  }

  humanWait(kind: string, outcome: string, seconds: number): void {
    this.#humanWait.observe({ kind, outcome }, seconds);
  }
  answerToResume(seconds: number): void {
    this.#answerToResume.observe(seconds);
  }
  modelCall(model: string, outcome: 'ok' | 'error', seconds: number): void {
    this.#modelCall.observe({ model, outcome }, seconds);
  }
  runEnded(ending: RunEnding, seconds?: number): void {
    this.#ended[ending].inc();
    if (seconds !== undefined) this.#runDuration.observe({ outcome: ending }, seconds);
  }
  runExpired(): void {
    this.#expired.inc();
  }
  retryScheduled(): void {
    this.#retries.inc();
  }
  leaseLost(): void {
    this.#leasesLost.inc();
  }
  answerRefused(reason: string): void {
    this.#refused.inc({ reason });
  }
  notification(channel: string, outcome: 'delivered' | 'failed'): void {
    this.#notifications[outcome].inc({ channel });
  }

  /** The metrics in the Prometheus text format, the database's gauges read now. */
  async text(): Promise<string> {
    const storage = this.#storage();
    // One snapshot: a question and its run's status are counted as of the same commit.
    const [pending, census] = await storage.snapshot(
      async (tx) =>
        [await storage.pauses(tx).countPending(), await storage.runs(tx).census()] as const,
    );
    const pool = await storage.poolUse?.();
    this.#pending.reset();
    this.#overdue.reset();
    const overdue = new Map<string, number>();
    for (const group of pending) {
      const priority = priorityLabel(group.priority) ?? 'normal';
      this.#pending.inc({ kind: group.kind, priority }, group.pending);
      overdue.set(group.kind, (overdue.get(group.kind) ?? 0) + group.overdue);
    }
    for (const [kind, count] of overdue) this.#overdue.set({ kind }, count);
    for (const [status, count] of Object.entries(census.byStatus))
      this.#runs.set({ status }, count);
    this.#leases.set(census.leased);
    if (pool && this.#pool) {
      this.#pool.inUse.set(pool.inUse);
      this.#pool.size.set(pool.size);
    }
    return this.registry.metrics();
  }

  /** Answers a scrape: the text format, or 503 when the database cannot be read. */
  async send(res: ServerResponse, head = false): Promise<void> {
    let body: string;
    try {
      body = await this.text();
    } catch (error) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`cannot read the database: ${(error as Error)?.message ?? error}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': this.registry.contentType, 'cache-control': 'no-store' });
    res.end(head ? undefined : body);
  }

  #gauge(name: string, help: string, labelNames: string[] = []): Gauge {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  #counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [this.registry] });
  }
}

/** A listener of `/metrics` alone, without sign-in (`--metrics-host/--metrics-port`). */
export interface MetricsListener {
  /** E.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `metrics` at `/metrics` on `host:port` (`0` picks a free port), to anyone who can
 * reach it: bind it where only the scraper can (default loopback).
 */
export async function listenMetrics(
  metrics: RunnerMetrics,
  host: string,
  port: number,
): Promise<MetricsListener> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('only GET /metrics here\n');
      return;
    }
    void metrics.send(res, req.method === 'HEAD');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
