import type { ServerResponse } from 'node:http';
import type { PauseView, RecentView, ServeEvent } from '../../web/src/api-types.d.ts';
import type { Storage } from '../storage/index.js';
import { baseHeaders } from './http.js';
import { approvalsOf, pauseView, recentViewsIn } from './views.js';

const WINDOW = 200;
const KEEPALIVE_MS = 15_000;
const REMEMBERED = 5_000;

type Seen = { rank: number; view: PauseView | RecentView };

// pending 0 → answered 1 → resumed or failed 2 (closed stays at 1: no run will follow).
function rankOf(view: RecentView): number {
  if (view.status === 'pending') return 0;
  return view.status === 'resumed' || view.status === 'failed' ? 2 : 1;
}

/**
 * The live feed of `GET /api/events`. Every event comes from ONE place, a diff of
 * database snapshots, so it is the same whoever changed the database (this server's API,
 * its wake loop, another process on PostgreSQL) and never sent twice. Notifications
 * (LISTEN/NOTIFY, this process's own writes) only make the next snapshot come sooner;
 * `pollMs` is the fallback for what no one notifies (a run finished by another process).
 * Snapshots are taken only while a page is connected.
 */
export class EventHub {
  readonly #clients = new Set<ServerResponse>();
  readonly #storage: Storage;
  readonly #pollMs: number;
  readonly #onError: (error: unknown) => void;
  #seen = new Map<string, Seen>();
  #active = false;
  // Each start gets a generation, so a loop left over from a stop never runs beside a new one.
  #generation = 0;
  #poked = false;
  #wakeUp: () => void = () => {};
  #ready: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #keepalive: NodeJS.Timeout | undefined;

  constructor(options: {
    storage: Storage;
    pollMs: number;
    onError: (error: unknown) => void;
  }) {
    this.#storage = options.storage;
    this.#pollMs = options.pollMs;
    this.#onError = options.onError;
  }

  /** Something may have changed: take the next snapshot now. */
  poke(): void {
    this.#poked = true;
    this.#wakeUp();
  }

  /** Streams events to `res` until the client goes away. */
  async subscribe(res: ServerResponse): Promise<void> {
    res.writeHead(200, {
      ...baseHeaders,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    res.write('retry: 2000\n\n');
    this.#clients.add(res);
    res.on('close', () => {
      this.#clients.delete(res);
      if (this.#clients.size === 0) this.#stop();
    });
    if (!this.#active) this.#start();
    try {
      await this.#ready;
    } catch {
      // The first snapshot failed; the loop keeps trying and the page refetches anyway.
    }
    if (!res.writableEnded) res.write(`event: ready\ndata: {}\n\n`);
  }

  /** Ends every stream (server shutdown). */
  async close(): Promise<void> {
    for (const res of this.#clients) res.end();
    this.#clients.clear();
    this.#stop();
    await this.#loop;
  }

  #send(event: ServeEvent): void {
    const frame = `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
    for (const res of this.#clients) res.write(frame);
  }

  #start(): void {
    this.#active = true;
    const generation = ++this.#generation;
    const current = () => this.#active && this.#generation === generation;
    this.#seen = new Map();
    let baselineDone: () => void = () => {};
    let baselineFailed: (error: unknown) => void = () => {};
    this.#ready = new Promise<void>((resolve, reject) => {
      baselineDone = resolve;
      baselineFailed = reject;
    });
    this.#ready.catch(() => {});
    this.#keepalive = setInterval(() => {
      for (const res of this.#clients) res.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.#keepalive.unref();
    this.#loop = (async () => {
      let first = true;
      while (current()) {
        this.#poked = false;
        try {
          await this.#snapshot(first);
          if (first) baselineDone();
          first = false;
        } catch (error) {
          if (first) baselineFailed(error);
          this.#onError(error);
        }
        if (this.#poked || !current()) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.#pollMs);
          timer.unref();
          this.#wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    })();
  }

  #stop(): void {
    this.#active = false;
    clearInterval(this.#keepalive);
    this.#wakeUp();
  }

  async #snapshot(baseline: boolean): Promise<void> {
    // One snapshot: a run that commits between two reads cannot show half its change.
    const { pending, recent } = await this.#storage.snapshot(async (tx) => {
      const listed = await this.#storage.pauses(tx).listPendingAll(WINDOW);
      const approvals = await approvalsOf(this.#storage, listed, tx);
      return {
        pending: listed.map((p) => pauseView(p, Date.now(), true, approvals.get(p.token))),
        recent: await recentViewsIn(this.#storage, tx, WINDOW),
      };
    });
    const next = new Map<string, Seen>();
    for (const view of recent) next.set(view.token, { rank: rankOf(view), view });
    for (const view of pending) next.set(view.token, { rank: 0, view });
    if (!baseline) {
      for (const [token, now] of next) {
        const seen = this.#seen.get(token);
        const before = seen?.rank ?? -1;
        if (now.rank > before) this.#emitTransitions(before, now);
        else if (seen && before === 0 && now.rank === 0) {
          this.#emitWaitChanges(seen.view as PauseView, now.view as PauseView);
        }
      }
    }
    // Remember tokens that slid out of the window too (up to a bound), so they never look
    // new again.
    for (const [token, seen] of this.#seen) {
      if (next.size >= REMEMBERED) break;
      if (!next.has(token)) next.set(token, seen);
    }
    this.#seen = next;
  }

  /** What changed of a question that still waits: an approval, its reminder, its escalation. */
  #emitWaitChanges(was: PauseView, is: PauseView): void {
    const base = { token: is.token, conversationId: is.conversationId };
    const given = (v: PauseView) =>
      v.quorum ? v.quorum.approvals.length + v.quorum.declines.length : 0;
    if (is.quorum && given(is) > given(was)) {
      this.#send({
        type: 'approval-recorded',
        ...base,
        approvals: is.quorum.approvals.length,
        needed: is.quorum.needed,
      });
    }
    if (is.reminder?.remindedAt && !was.reminder?.remindedAt) {
      this.#send({ type: 'question-reminded', ...base });
    }
    if (is.escalation?.escalatedAt && !was.escalation?.escalatedAt) {
      const { names, roles } = is.escalation;
      this.#send({ type: 'question-escalated', ...base, names, roles });
    }
  }

  #emitTransitions(before: number, now: Seen): void {
    const { view } = now;
    const action = 'answer' in view ? (view.answer?.action ?? null) : null;
    const base = { token: view.token, conversationId: view.conversationId };
    if (before < 0) {
      this.#send({ type: 'pause-created', ...base, kind: view.kind, question: view.question });
    }
    if (before < 1 && now.rank >= 1) this.#send({ type: 'pause-answered', ...base, action });
    if (before < 2 && now.rank >= 2) {
      const outcome = 'outcome' in view ? view.outcome : null;
      this.#send({ type: 'run-resumed', ...base, action, outcome });
      if (outcome === 'completed') this.#send({ type: 'run-completed', ...base });
    }
  }
}
