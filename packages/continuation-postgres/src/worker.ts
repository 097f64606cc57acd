import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ContinuationError } from '@x/continuation';
import { keepLease } from './lease-keeper.js';
import { backoffMs, DEFAULT_MAX_ATTEMPTS, describeAttempts, isRetryable } from './retry-policy.js';
import {
  type ClaimedRun,
  type PostgresRunQueue,
  RUN_READY_CHANNEL,
  RUN_RELEASED_CHANNEL,
} from './runs.js';
import type {
  RunJob,
  RunWorkerConnection,
  RunWorkerEvent,
  RunWorkerOptions,
} from './worker-options.js';

/** The default of {@link RunWorkerOptions.graceMs}. */
export const DEFAULT_GRACE_MS = 30_000;

const DEFAULT_LEASE_MS = 60_000;

/** How often the leases of live workers elsewhere are looked at: a dead one's run is taken within this. */
const TAKEOVER_CHECK_MS = 300;

/**
 * The unattended executive's worker over a {@link PostgresRunQueue}: claims one run per free
 * slot (woken by LISTEN/NOTIFY, when the next backoff or lease is due, or by a poll),
 * renews its lease while the app's `resume` runs, records a failed attempt with the retry
 * policy (exponential backoff with jitter, an attempt limit, errors never retried), and
 * stops gracefully: nothing more is claimed, resumes in flight get a grace, then their
 * leases are released so another worker takes over at once. Every write names the claim's
 * lease owner, so a worker that lost its lease never finishes another's run. A worker runs
 * once ({@link run} or {@link drain}); make another to start again.
 *
 * @example
 * const worker = new RunWorker({
 *   queue: new PostgresRunQueue(db),
 *   listen: listenPostgresJs(sql),
 *   concurrency: 4,
 *   retry: { maxAttempts: 3 },
 *   async resume(job) {
 *     const messages = await runModel(resumeMessages(job.suspension!, answerOf(job.run.input)), job.signal);
 *     await job.complete(messages);
 *   },
 *   onEvent: (event) => console.log(event.type),
 * });
 * process.once('SIGTERM', () => void worker.stop());
 * await worker.run();
 */
export class RunWorker<T = unknown> {
  readonly #options: RunWorkerOptions<T>;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #pollMs: number;
  readonly #maxAttempts: number;
  readonly #name: string;
  #connection: RunWorkerConnection;
  #unlisten: (() => Promise<void>) | undefined;
  #reconnecting: Promise<void> | undefined;
  #running: Promise<void> | undefined;
  #stopping = false;
  #ended = false;
  #idle = 0;
  #outages = 0;
  #renewFailedAt = Number.NEGATIVE_INFINITY;
  #claims = 0;
  #grace: NodeJS.Timeout | undefined;
  readonly #graceOver = new AbortController();
  // Ends the waits at a stop, so that no timer keeps the process up.
  readonly #halt = new AbortController();
  #wakeUp: () => void = () => {};
  #woken = this.#nextWakeUp();
  // Wakes the lease watcher when every slot went idle, so that `idle` is reported then.
  #allIdle: () => void = () => {};

  /** @throws {ContinuationError} `invalid` for a concurrency, lease or poll that is not a positive number. */
  constructor(options: RunWorkerOptions<T>) {
    this.#options = options;
    this.#connection = options;
    this.#concurrency = positive('concurrency', options.concurrency ?? 1, true);
    this.#leaseMs = positive('leaseMs', options.leaseMs ?? DEFAULT_LEASE_MS);
    this.#pollMs = positive('pollMs', options.pollMs ?? (options.listen ? 5_000 : 1_000));
    this.#maxAttempts = positive(
      'retry.maxAttempts',
      options.retry?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      true,
    );
    this.#name = options.name ?? `${hostname()}/${process.pid}`;
  }

  /**
   * Claims and resumes runs until {@link stop}; a database that fails is waited for (an
   * `error` event each time).
   * @returns when stopped and every resume in flight has ended.
   */
  run(): Promise<void> {
    return this.#start(undefined);
  }

  /**
   * Claims and resumes what is claimable now, each run at most once (a failed attempt is
   * left for later), at most `max` runs, then resolves.
   * @throws the database's error when it fails outside a run's attempt.
   */
  drain(max = Number.POSITIVE_INFINITY): Promise<void> {
    return this.#start(max);
  }

  /**
   * Stops: nothing more is claimed, resumes in flight get {@link RunWorkerOptions.graceMs}
   * to finish, then their `signal` is aborted and their leases released.
   * @returns when {@link run} has ended.
   */
  stop(): Promise<void> {
    if (!this.#stopping) {
      this.#stopping = true;
      this.#halt.abort();
      this.#poke();
      if (this.#running && !this.#ended) {
        const graceMs = this.#options.graceMs ?? DEFAULT_GRACE_MS;
        this.#grace = setTimeout(() => this.#graceOver.abort(), graceMs);
      }
    }
    return this.#running ?? Promise.resolve();
  }

  /** `drain` is how many runs a drain may take; undefined for {@link run}. */
  #start(drain: number | undefined): Promise<void> {
    if (this.#running) {
      throw new ContinuationError('invalid', '[@x/continuation-postgres] the worker already runs');
    }
    this.#running = this.#loop(drain);
    return this.#running;
  }

  async #loop(drain: number | undefined): Promise<void> {
    // A drain tries each run at most once: a failed attempt is left for a later pass.
    const tried = drain === undefined ? undefined : new Set<string>();
    if (!tried) await this.#listen();
    const watching = tried ? undefined : this.#watchLeases();
    const budget = { left: drain ?? 0 };
    try {
      await Promise.all(
        Array.from({ length: this.#concurrency }, (_, i) => this.#slot(i + 1, tried, budget)),
      );
    } finally {
      this.#ended = true;
      this.#halt.abort();
      clearTimeout(this.#grace);
      await watching;
      await this.#unlisten?.();
    }
  }

  /** `budget`: how many more runs a drain may claim, shared by its slots. */
  async #slot(
    index: number,
    tried: Set<string> | undefined,
    budget: { left: number },
  ): Promise<void> {
    while (!this.#stopping) {
      if (tried && budget.left-- <= 0) return;
      // Taken before looking, so that a notification while this slot is busy wakes it.
      const woken = this.#woken;
      const using = this.#connection;
      let after: number | undefined;
      try {
        after = await this.#claimOne(using, index, tried);
        this.#outages = 0;
      } catch (error) {
        const retryInMs = backoffMs(this.#outages++);
        this.#emit({ type: 'error', error, retryInMs });
        if (tried) throw error;
        await this.#pause(retryInMs);
        await this.#reconnect(using);
        continue;
      }
      if (after === 0) continue;
      if (after !== undefined) {
        // Idle for the lease watcher's next look, which is not woken for it: that look
        // after every run would be a query per run.
        this.#idle++;
        await this.#pause(after, woken);
        this.#idle--;
        continue;
      }
      if (tried) return;
      if (++this.#idle === this.#concurrency) this.#allIdle();
      await this.#pause(await this.#untilNextDue(using), woken);
      this.#idle--;
    }
  }

  /**
   * Claims one run and resumes it. Returns undefined when nothing was claimed, else how long
   * to wait before the next claim: 0, or, for a listening worker after a resumed run, until
   * the next due time the claim saw (every run made claimable since is notified and ends
   * the wait).
   */
  async #claimOne(
    { queue, holder }: RunWorkerConnection,
    index: number,
    tried: Set<string> | undefined,
  ): Promise<number | undefined> {
    // Unique per claim: it is the fencing token that the run's later writes must present.
    const owner = `${this.#name}/w${index}#${++this.#claims}.${randomUUID().slice(0, 8)}`;
    const key = await holder?.();
    const claimed = await queue.claim({
      owner,
      leaseMs: this.#leaseMs,
      skip: [...(tried ?? [])],
      ...(key === undefined ? {} : { holder: key }),
    });
    if (!claimed) return undefined;
    if (tried?.has(claimed.run.runId)) {
      // This claim left the queue before another slot tried the run, which failed and is ready
      // again: a drain tries each run once, so it is given back uncounted.
      await queue.release(claimed.run.runId, owner);
      return 0;
    }
    const claimedAt = Date.now();
    tried?.add(claimed.run.runId);
    const resumed = await this.#attempt(queue, claimed, owner);
    // Only a listening worker hears of every run made claimable during the resume.
    if (!resumed || tried || !this.#unlisten) return 0;
    const { nextDueInMs } = claimed;
    if (nextDueInMs === undefined) return this.#pollMs;
    return Math.max(0, Math.min(this.#pollMs, claimedAt + nextDueInMs + 10 - Date.now()));
  }

  /** @returns true when the resume returned (`run-resumed`). */
  async #attempt(queue: PostgresRunQueue, claimed: ClaimedRun, owner: string): Promise<boolean> {
    const { runId } = claimed.run;
    const renewMs = this.#options.renewEveryMs ?? this.#leaseMs / 3;
    const lease = keepLease(
      queue,
      runId,
      owner,
      this.#leaseMs,
      renewMs,
      this.#graceOver.signal,
      (error) => this.#renewFailed(error, renewMs),
    );
    const job: RunJob = {
      ...claimed,
      owner,
      attempt: claimed.run.attempts,
      leaseMs: this.#leaseMs,
      signal: lease.signal,
      queue,
      finish: (end) => queue.finish(runId, owner, end),
      complete: (messages) => queue.complete(runId, owner, messages),
    };
    let result: T;
    try {
      this.#emit({ type: 'run-claimed', job });
      // The attempts before this claim used up the limit (usually the last of them with its
      // worker gone: an error would have failed the run then); this claim is no attempt.
      if (job.attempt - 1 >= this.#maxAttempts) {
        await lease.stop();
        await this.#giveUp(job);
        return false;
      }
      result = await this.#options.resume(job);
    } catch (error) {
      await lease.stop();
      if (lease.lost || ContinuationError.hasCode(error, 'lease_lost')) {
        this.#emit({ type: 'lease-lost', job });
      } else if (lease.cut) await this.#release(job);
      else await this.#fail(job, error);
      return false;
    } finally {
      await lease.stop();
    }
    this.#emit({ type: 'run-resumed', job, result });
    return true;
  }

  /** A failed renewal is the only sign of an outage while every slot waits on its resume; said once per tick, not once per run. */
  #renewFailed(error: unknown, renewMs: number): void {
    const now = Date.now();
    if (now - this.#renewFailedAt < renewMs) return;
    this.#renewFailedAt = now;
    this.#emit({ type: 'error', error, retryInMs: renewMs });
  }

  async #giveUp(job: RunJob): Promise<void> {
    const { run } = job;
    const before = job.attempt - 1;
    const attempts = { workerGone: run.lostAttempts, errors: before - run.lostAttempts };
    const { limitName } = this.#options.retry ?? {};
    const limit = limitName
      ? `the limit (${limitName}=${this.#maxAttempts})`
      : `the limit of ${this.#maxAttempts}`;
    const reason = `gave up after ${before} attempt${before === 1 ? '' : 's'} (${describeAttempts(attempts)}), ${limit}`;
    await this.#recordFailure(job, reason, (queue) => queue.giveUp(run.runId, job.owner, reason));
    this.#emit({ type: 'run-failed', job, error: undefined, reason, attempts, gaveUp: true });
  }

  async #fail(job: RunJob, error: unknown): Promise<void> {
    const { run } = job;
    const reason = this.#options.describeError?.(error) ?? messageOf(error);
    const policy = this.#options.retry ?? {};
    const final =
      !isRetryable(error) ||
      policy.retryable?.(error) === false ||
      job.attempt >= this.#maxAttempts;
    const retryInMs = final ? undefined : backoffMs(job.attempt - 1, policy);
    try {
      const fail = async (queue: PostgresRunQueue) => {
        await queue.fail(run.runId, job.owner, reason, retryInMs);
      };
      await (retryInMs === undefined ? this.#recordFailure(job, reason, fail) : fail(job.queue));
    } catch (failure) {
      if (!ContinuationError.hasCode(failure, 'lease_lost')) throw failure;
      return this.#emit({ type: 'lease-lost', job });
    }
    const attempts = { workerGone: run.lostAttempts, errors: run.attempts - run.lostAttempts };
    this.#emit(
      retryInMs === undefined
        ? { type: 'run-failed', job, error, reason, attempts, gaveUp: false }
        : { type: 'retry-scheduled', job, error, reason, retryInMs },
    );
  }

  /** Writes a run's failure through the app's {@link RunWorkerOptions.recordFailure}, or alone. */
  #recordFailure(
    job: RunJob,
    reason: string,
    record: (queue: PostgresRunQueue) => Promise<void>,
  ): Promise<void> {
    const { recordFailure } = this.#options;
    return recordFailure ? recordFailure(job, { reason }, record) : record(job.queue);
  }

  /** The cut resume wrote nothing, and the release fences it off: any worker may claim the run at once. */
  async #release(job: RunJob): Promise<void> {
    const released = await job.queue.release(job.run.runId, job.owner);
    this.#emit({ type: released ? 'run-released' : 'lease-lost', job });
  }

  // A retry's backoff or an expired lease sends no notification: sleep until the next one is due.
  async #untilNextDue({ queue, holder }: RunWorkerConnection): Promise<number> {
    const due = await (async () => queue.nextDueInMs(await holder?.()))().catch(() => undefined);
    return due === undefined ? this.#pollMs : Math.min(this.#pollMs, due + 10);
  }

  /**
   * A worker process that dies sends no notification: while other processes hold leases
   * whose holders can be seen, look every {@link TAKEOVER_CHECK_MS} whether one of them is
   * gone (then wake the slots to claim its runs); else at the poll interval. Reports `idle`
   * when the others' leases changed and every slot is idle.
   */
  async #watchLeases(): Promise<void> {
    let said = '';
    while (!this.#stopping && !this.#ended) {
      const { queue, holder } = this.#connection;
      const leases = await (async () => {
        const key = await holder?.();
        return queue.leases(key === undefined ? {} : { holder: key });
      })().catch(() => undefined);
      const others = (leases ?? []).filter((lease) => lease.holder !== 'self');
      if (others.some((lease) => lease.holder === 'gone')) this.#poke();
      const seen = JSON.stringify(others.map((l) => [l.runId, l.owner, l.holder]));
      if (leases && seen !== said && this.#idle === this.#concurrency) {
        said = seen;
        this.#emit({ type: 'idle', leases: others });
      }
      const soon = others.some((lease) => lease.holder === 'alive');
      const allIdle = new Promise<void>((resolve) => {
        this.#allIdle = resolve;
      });
      await this.#pause(soon ? TAKEOVER_CHECK_MS : this.#pollMs, allIdle);
    }
  }

  async #listen(): Promise<void> {
    const channels = [RUN_RELEASED_CHANNEL, RUN_READY_CHANNEL, ...(this.#options.channels ?? [])];
    // A failed LISTEN leaves the poll, the fallback it always has.
    this.#unlisten = await this.#connection
      .listen?.(channels, () => this.#poke())
      .catch(() => undefined);
  }

  // One reconnect at a time; slots that failed on the old connection wait for it.
  #reconnect(broken: RunWorkerConnection): Promise<void> | undefined {
    const { reconnect } = this.#options;
    if (!reconnect || this.#connection !== broken) return this.#reconnecting;
    this.#reconnecting ??= (async () => {
      // Not awaited: the broken connection ends in the background.
      void this.#unlisten?.().catch(() => {});
      this.#unlisten = undefined;
      this.#connection = await reconnect();
      await this.#listen();
    })()
      .catch(() => {}) // the next claim reports the outage again
      .finally(() => {
        this.#reconnecting = undefined;
      });
    return this.#reconnecting;
  }

  #emit(event: RunWorkerEvent<T>): void {
    this.#options.onEvent?.(event);
  }

  #nextWakeUp(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wakeUp = resolve;
    });
  }

  #poke(): void {
    this.#wakeUp();
    this.#woken = this.#nextWakeUp();
  }

  /** Sleeps `ms`, or less when `until` resolves first or the worker stops. */
  #pause(ms: number, until?: Promise<void>): Promise<void> {
    const { signal } = this.#halt;
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      void until?.then(done);
    });
  }
}

function positive(field: string, value: number, whole = false): number {
  if (Number.isFinite(value) && value > 0 && (!whole || Number.isInteger(value))) return value;
  throw new ContinuationError(
    'invalid',
    `[@x/continuation-postgres] RunWorker's ${field} must be a positive ${whole ? 'whole ' : ''}number, not ${value}`,
    { field },
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
