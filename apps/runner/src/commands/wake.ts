import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_GRACE_MS, describeAttempts, type LeaseRecord } from '@x/continuation-postgres';
import { leasePolicyFromEnv, questionPolicyFromEnv } from '../config/executive-policy.js';
import { OPTION_DEFAULTS, setting, VARIABLES } from '../config/index.js';
import { postgresCause, RunnerError, usageError } from '../errors.js';
import {
  type Resumed,
  type ResumeOptions,
  wake as wakeLoop,
  watching,
} from '../executive/index.js';
import { modelFromId } from '../model/index.js';
import { type DeliveryEvent, deliveryFromEnv } from '../notify/deliver.js';
import type { MetricsListener, RunnerMetrics } from '../serve/metrics.js';
import type { Storage } from '../storage/index.js';
import { createOutput, labelledLines, type Output, plural } from '../terminal/output.js';
import { observer } from '../terminal/turn-output.js';
import { type Command, globalOptions } from './command.js';
import { parseAge } from './paused-states.js';
import { report } from './run-report.js';

/** `accept "Lisbon"`, `decline`, `deadline 2026-…Z passed`: an answer in a few words. */
function describeAnswer(answer: Resumed['answer'], deadline?: Date): string {
  if (!answer) return `deadline ${deadline?.toISOString() ?? ''} passed`;
  return `${answer.action}${answer.content ? ` "${answer.content}"` : ''}`;
}

/**
 * Prints how one claimed run's attempt ended; `announced` when {@link reportClaimed} already
 * said which run it is.
 */
export function reportResumed(out: Output, resumed: Resumed, announced = false): void {
  const { runId, token, conversationId, answer, attempt, outcome } = resumed;
  const base = { runId, token, conversationId, attempt };
  // A failed attempt is a problem line (stderr) for people, and an event for scripts.
  switch (outcome.status) {
    case 'retrying':
      out.record({
        type: 'run-retrying',
        ...base,
        error: outcome.error,
        retryInMs: outcome.retryInMs,
      });
      out.error(
        `run ${runId} (${conversationId}) attempt ${attempt} failed: ${outcome.error}; it stays answered and is retried in ${Math.ceil(outcome.retryInMs / 1000)} s`,
      );
      return;
    case 'failed': {
      const { workerGone, errors } = outcome.attempts;
      out.record({ type: 'run-failed', ...base, error: outcome.error, workerGone, errors });
      // A give-up's error already counts the attempts.
      const why = outcome.gaveUp
        ? outcome.error
        : `failed after ${plural(attempt, 'attempt')} (${describeAttempts(outcome.attempts)}): ${outcome.error}`;
      out.error(
        `run ${runId} (${conversationId}) ${outcome.gaveUp ? 'failed: ' : ''}${why}\n  it stays answered; retry it with: ${out.command(`retry ${runId}`)}`,
      );
      return;
    }
    case 'lease-lost':
      out.record({ type: 'run-lease-lost', ...base });
      out.error(
        `run ${runId} (${conversationId}): this worker stalled past its lease and another took the run over; nothing of this attempt was written`,
      );
      return;
    case 'reminded': {
      // Runner events: the question's reminder and escalation, each once.
      const next = outcome.nextAt ? `; it waits, next due ${outcome.nextAt.toISOString()}` : '';
      if (outcome.reminded) {
        out.record(
          { type: 'question-reminded', runId, token, conversationId },
          `reminded the audience of ${token} (${conversationId}): still unanswered${next}`,
        );
      }
      if (outcome.escalated) {
        const { names, roles } = outcome.escalated;
        const who = [...roles, ...names.map((n) => `@${n}`)].join(', ');
        out.record(
          { type: 'question-escalated', runId, token, conversationId, names, roles },
          `escalated ${token} (${conversationId}) to ${who}${next}`,
        );
      }
      return;
    }
    case 'released':
      out.record(
        { type: 'run-released', ...base },
        `run ${runId} (${conversationId}) did not finish within the grace: its turn was cut, nothing of it was written, and the run is ready for the next worker`,
      );
      return;
    default:
      out.record(
        {
          type: 'resumed',
          ...base,
          action: answer?.action ?? 'expired',
          status: outcome.status,
        },
        announced
          ? undefined
          : resumed.delegated
            ? `resumed the delegate call of ${conversationId} (answered worker questions)`
            : `resumed ${token} (${describeAnswer(answer, resumed.deadline)}) of ${conversationId}`,
      );
      report(out, outcome);
  }
}

/** Says which run a worker claimed, before that run's turn prints anything. */
export function reportClaimed(out: Output, claimed: Omit<Resumed, 'outcome'>): void {
  const { runId, token, conversationId, answer, attempt } = claimed;
  // Taken at a reminder's or escalation's time: reportResumed says what was applied.
  if (!answer && !claimed.deadline && !claimed.delegated) return;
  const what = claimed.delegated
    ? `the delegate call of ${conversationId} (answered worker questions)`
    : `${token} (${describeAnswer(answer, claimed.deadline)}) of ${conversationId}`;
  out.record(
    {
      type: 'run-claimed',
      runId,
      token,
      conversationId,
      attempt,
      action: answer?.action ?? 'expired',
    },
    `\nresumed ${what}${attempt > 1 ? `, attempt ${attempt}` : ''}`,
  );
}

/**
 * Says what other workers hold when nothing is left to claim: how many runs, by which
 * worker (its owner without the claim's suffix: host/pid/worker), and when each becomes
 * claimable. Nothing when no run is leased.
 */
function reportLeased(out: Output, leases: readonly LeaseRecord[], now = Date.now()): void {
  if (leases.length === 0) return;
  const byWorker = new Map<string, { runs: number; holder: LeaseRecord['holder']; at: number }>();
  for (const lease of leases) {
    const worker = lease.owner.split('#')[0] ?? lease.owner;
    const key = `${worker} ${lease.holder}`;
    const at = lease.holder === 'gone' ? now : lease.expiresAt.getTime();
    const seen = byWorker.get(key);
    byWorker.set(key, {
      runs: (seen?.runs ?? 0) + 1,
      holder: lease.holder,
      at: Math.min(seen?.at ?? at, at),
    });
  }
  const workers = [...byWorker].map(([key, v]) => ({
    worker: key.slice(0, key.lastIndexOf(' ')),
    runs: v.runs,
    holder: v.holder,
    claimableAt: new Date(v.at).toISOString(),
    claimableInMs: Math.max(0, v.at - now),
  }));
  const described = workers.map((w) => {
    const at = `${w.claimableAt} (in ${Math.ceil(w.claimableInMs / 1000)} s)`;
    const when =
      w.holder === 'gone'
        ? 'its process is gone: claimable now'
        : w.holder === 'alive'
          ? `its process lives: claimable when the lease expires unrenewed, at ${at}, or at once if it dies`
          : `claimed through a pooler, its process cannot be seen: claimable when the lease expires unrenewed, at ${at}`;
    return `${w.runs} by ${w.worker} (${when})`;
  });
  out.record(
    { type: 'leased', runs: leases.length, workers },
    `nothing to resume now: ${plural(leases.length, 'run is', 'runs are')} leased: ${described.join('; ')}`,
  );
}

/** `runner wake [--once] [--concurrency N]`: the executive's wake loop. */

/** `--grace DURATION`: how long a stopping wake lets turns in flight finish (default 30 s). */
export function parseGrace(text: string | undefined): number {
  if (text === undefined) return DEFAULT_GRACE_MS;
  return parseAge(text, '--grace', 'a duration like 30s, 500ms or 2m (0 cuts at once)');
}

/**
 * A long-running command's stop on SIGINT or SIGTERM: the first resolves `requested` (claim
 * nothing more; turns in flight get `graceMs`, then are cut and their leases released); a
 * second ends the process at once (exit 128 + the signal's number), which the leases keep
 * safe: its runs are claimable again when they expire, and it can commit nothing.
 */
export function stopOnSignals(
  out: Output,
  graceMs: number,
): { requested: Promise<void>; dispose(): void } {
  let request = () => {};
  const requested = new Promise<void>((resolve) => {
    request = resolve;
  });
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      out.record(
        { type: 'stop-forced', signal },
        `${signal} again: stopping at once; a run still in flight is taken over as when this process is killed`,
      );
      process.exit(128 + (constants.signals[signal] ?? 0));
    }
    signalled = true;
    out.record(
      { type: 'stop-requested', signal, graceMs },
      `${signal}: stopping; nothing more is claimed, runs in flight get ${graceMs / 1000} s to finish, then their leases are released (${signal} again stops at once)`,
    );
    request();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    requested,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** `--metrics-port N` and `--metrics-host ADDR`: where metrics listen without sign-in, if asked. */
export function metricsAddress(values: {
  'metrics-port'?: string | undefined;
  'metrics-host'?: string | undefined;
}): { host: string; port: number } | undefined {
  const given = values['metrics-port'];
  if (given === undefined) {
    if (values['metrics-host'] !== undefined)
      throw usageError('--metrics-host needs --metrics-port');
    return undefined;
  }
  const port = Number(given);
  if (!/^\d+$/.test(given) || port > 65535)
    throw usageError('--metrics-port takes a number from 0 to 65535');
  return { host: values['metrics-host'] ?? OPTION_DEFAULTS.host, port };
}

/** The options of commands that export metrics. */
export const metricsOptions = {
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
} as const;

/**
 * Starts the metrics listener (`--metrics-port`) of a long-running command and says where it
 * is; a port in use is a clear error.
 */
export async function startMetrics(
  out: Output,
  metrics: RunnerMetrics,
  where: { host: string; port: number },
): Promise<MetricsListener> {
  const { listenMetrics } = await import('../serve/metrics.js');
  const listener = await listenMetrics(metrics, where.host, where.port).catch((error: unknown) => {
    throw new RunnerError(
      'unavailable',
      `cannot serve metrics on ${where.host}:${where.port} (${(error as { code?: string })?.code ?? (error as Error)?.message}): give another --metrics-port`,
      { cause: error },
    );
  });
  out.record({ type: 'metrics', url: listener.url }, `metrics on ${listener.url}`);
  return listener;
}

/** `runner wake [--once] [--concurrency N] [--grace DURATION]`: the executive's wake loop. */
export const wake: Command = async (ctx, args) => {
  const { values } = parseArgs({
    args,
    options: {
      ...globalOptions,
      once: { type: 'boolean' },
      concurrency: { type: 'string' },
      grace: { type: 'string' },
      ...metricsOptions,
    },
  });
  const metricsAt = metricsAddress(values);
  const concurrency = Number(values.concurrency ?? OPTION_DEFAULTS.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw usageError('--concurrency takes a whole number from 1 to 64');
  }
  const graceMs = parseGrace(values.grace);
  const policy = leasePolicyFromEnv();
  const questionPolicy = questionPolicyFromEnv();
  // Before the storage opens: a signal while it opens stops the wake before it claims.
  const stop = stopOnSignals(ctx.out, graceMs);
  // Not withStorage: after a database outage the wake loop may swap in a fresh storage,
  // and the one in use at the end is the one to close.
  let storage = await ctx.open().catch((error: unknown) => {
    stop.dispose();
    throw error;
  });
  let metricsListener: MetricsListener | undefined;
  try {
    if (metricsAt) {
      // Loaded only when asked for: a wake without metrics loads no prom-client.
      const { RunnerMetrics } = await import('../serve/metrics.js');
      const metrics = new RunnerMetrics(() => storage);
      watching.telemetry = metrics;
      metricsListener = await startMetrics(ctx.out, metrics, metricsAt);
    }
    const pollMs = setting(VARIABLES.RUNNER_WAKE_POLL_MS);
    if (!values.once) reportWaiting(ctx.out, storage, concurrency, pollMs);
    let resumed = 0;
    const runs = runOutputs(ctx.out);
    const outcome = await wakeLoop(storage, {
      once: Boolean(values.once),
      concurrency,
      pollMs,
      policy,
      questionPolicy,
      modelFor: (id) => modelFromId(id || ctx.modelId),
      observerFor: runs.observerFor,
      onClaimed: (claimed) => reportClaimed(ctx.out, claimed),
      onLeased: (leases) => reportLeased(ctx.out, leases),
      onResumed: (done) => {
        resumed++;
        runs.flush(done.runId);
        reportResumed(ctx.out, done, true);
      },
      onUnavailable: (error, wait) =>
        ctx.out.error(
          `database unavailable (${postgresCause(error) ?? (error as Error)?.message ?? error}); retrying in ${Math.round(wait / 1000)}s`,
        ),
      stop: stop.requested,
      graceMs,
      delivery: { ...deliveryFromEnv(), onDelivery: (event) => reportDelivery(ctx.out, event) },
      reopen:
        storage.kind === 'postgres'
          ? async () => {
              const fresh = await ctx.open();
              // Not awaited: ending a pool that lost its server waits out its timeout (5 s).
              void storage.close().catch(() => {});
              storage = fresh;
              return fresh;
            }
          : undefined,
    });
    storage = outcome.storage;
    if (values.once) await reportDrained(ctx.out, storage, resumed);
    return outcome.failed > 0 && values.once ? 1 : 0;
  } finally {
    await metricsListener?.close();
    watching.telemetry = undefined;
    await storage.close();
    stop.dispose();
  }
};

/** How one delivery attempt of a notification ended. */
function reportDelivery(out: Output, event: DeliveryEvent): void {
  const which = `notification ${event.id} (${event.kind}, attempt ${event.attempt})`;
  if (event.type === 'notification-delivered') {
    out.record(event, `${which} delivered`);
    return;
  }
  const again =
    event.retryInMs === undefined
      ? 'failed for good (runner notifications retry ID sends it again)'
      : `sent again in ${Math.ceil(event.retryInMs / 1000)} s`;
  out.record(event, `${which} not delivered: ${event.error}; ${again}`);
}

/** Says that the loop waits for answers, and how it learns of them behind a pooler. */
function reportWaiting(
  out: Output,
  storage: Storage,
  concurrency: number,
  pollMs: number | undefined,
): void {
  out.record(
    { type: 'ready', where: storage.where, concurrency },
    `waiting for answers in ${storage.where} (Ctrl-C to stop)`,
  );
  if (!storage.listen && storage.kind === 'postgres') {
    out.note(
      `no LISTEN through the pooler: looking for answers every ${(pollMs ?? 5_000) / 1000} s (set RUNNER_LISTEN_URL to a direct connection to be woken at once)`,
    );
  }
}

/**
 * Each resumed run's output: the events as they are for scripts; for people, lines that
 * carry the run's conversation, flushed when its attempt ended.
 */
function runOutputs(out: Output): {
  observerFor: ResumeOptions['observerFor'];
  flush(runId: string): void;
} {
  const runLines = new Map<string, ReturnType<typeof labelledLines>>();
  return {
    observerFor: ({ runId, token, conversationId }) => {
      const tags = { runId, token, conversationId };
      if (out.json) return observer(out, tags);
      // Each run's lines carry its conversation: runs resumed side by side stay readable.
      const lines = labelledLines(`[${conversationId}]`, process.stdout);
      runLines.set(runId, lines);
      return observer(createOutput({ json: false, stdout: lines }), tags);
    },
    flush(runId) {
      runLines.get(runId)?.flush();
      runLines.delete(runId);
    },
  };
}

/** After `--once`: the runs other workers still lease, or that nothing was ready. */
async function reportDrained(out: Output, storage: Storage, resumed: number): Promise<void> {
  const holder = await storage.leaseHolder();
  const leases = (await storage.runs().leases(holder === undefined ? {} : { holder })).filter(
    (lease) => lease.holder !== 'self',
  );
  reportLeased(out, leases);
  if (resumed === 0 && leases.length === 0) {
    out.record({ type: 'idle' }, 'nothing to resume: no answered run is ready');
  }
}
