import type { ServerResponse } from 'node:http';
import type { PauseView, RecentView, ServeEvent } from '../contract/index.js';
import { baseHeaders } from '../http/send.js';

const KEEPALIVE_MS = 15_000;
const REMEMBERED = 5_000;
/** How often open streams re-check their credentials when no event comes (another process may revoke). */
const CREDENTIAL_CHECK_MS = 5_000;
/** Longest delay setTimeout takes; a session's expiry further away is found by the periodic check. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A credential that can stop signing in while a stream it opened is still open. */
export interface Credential {
  /** The same for every request of this credential: it is looked up once per round. */
  id: string;
  /** When it ends by itself (a page session's expiry). */
  expiresAt?: Date;
  /** True while it still signs in: the key live and not rotated, the session not ended. */
  live(): Promise<boolean>;
}

/**
 * What the feed diffs: the pending questions (at most the newest 200 is enough) and the
 * recent ones, read in ONE snapshot of the database, so a run that commits between two
 * reads cannot show half its change.
 */
export interface LiveSnapshot {
  pending: PauseView[];
  recent: RecentView[];
}

/** Options of {@link EventHub}. */
export interface EventHubOptions {
  /** Reads the questions in one snapshot of the database. */
  snapshot: () => Promise<LiveSnapshot>;
  /** How often a snapshot is taken when nothing pokes the feed, in ms. */
  pollMs: number;
  /** How often open streams re-check their credentials; default 5 s. */
  checkMs?: number;
  /** A snapshot failed (the feed keeps trying). */
  onError: (error: unknown) => void;
}

/** One open stream: its response, and the credential that opened it (none: the server's own). */
interface Client {
  res: ServerResponse;
  credential: Credential | undefined;
  expiry: NodeJS.Timeout | undefined;
}

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
  readonly #clients = new Set<Client>();
  readonly #takeSnapshot: () => Promise<LiveSnapshot>;
  readonly #pollMs: number;
  readonly #checkMs: number;
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
  #checker: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;

  constructor(options: EventHubOptions) {
    this.#takeSnapshot = options.snapshot;
    this.#pollMs = options.pollMs;
    this.#checkMs = options.checkMs ?? CREDENTIAL_CHECK_MS;
    this.#onError = options.onError;
  }

  /** Something may have changed: take the next snapshot now. */
  poke(): void {
    this.#poked = true;
    this.#wakeUp();
  }

  /**
   * Streams events to `res` until the client goes away, or until `credential` (what signed
   * the request in) stops signing in: a key revoked or rotated, a session signed out or
   * expired. The credential is looked up again before each delivery of events and every
   * `checkMs` besides (a revocation may come from another process), and a
   * session's stream ends at its expiry; the stream then gets a last `signed-out` event
   * and is closed.
   */
  async subscribe(res: ServerResponse, credential?: Credential): Promise<void> {
    res.writeHead(200, {
      ...baseHeaders,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    res.write('retry: 2000\n\n');
    const client: Client = { res, credential, expiry: undefined };
    const expiresIn = credential?.expiresAt ? credential.expiresAt.getTime() - Date.now() : -1;
    if (credential?.expiresAt && expiresIn <= MAX_TIMER_MS) {
      client.expiry = setTimeout(
        () => this.#signOut(client, 'your session expired'),
        Math.max(0, expiresIn),
      );
      client.expiry.unref();
    }
    this.#clients.add(client);
    res.on('close', () => {
      clearTimeout(client.expiry);
      this.#clients.delete(client);
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

  /**
   * Checks every open stream's credential now (this process revoked, rotated or signed one
   * out); streams whose credential no longer signs in end.
   */
  recheck(): Promise<void> {
    this.#checking ??= this.#checkAll().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  /** Ends every stream (server shutdown). */
  async close(): Promise<void> {
    for (const { res, expiry } of this.#clients) {
      clearTimeout(expiry);
      res.end();
    }
    this.#clients.clear();
    this.#stop();
    await this.#loop;
    await this.#checking;
  }

  async #checkAll(): Promise<void> {
    const live = this.#liveness();
    await Promise.all([...this.#clients].map((client) => this.#stillSignedIn(client, live)));
  }

  /** Looks up each credential once per round, however many streams it opened. */
  #liveness(): (credential: Credential) => Promise<boolean> {
    const seen = new Map<string, Promise<boolean>>();
    return (credential) => {
      let live = seen.get(credential.id);
      if (!live) {
        // A credential that cannot be checked (the database is down) ends its stream:
        // the page reconnects, and is signed in again or refused.
        live = credential.live().catch(() => false);
        seen.set(credential.id, live);
      }
      return live;
    };
  }

  /** True when `client`'s credential still signs in; else its stream is ended. */
  async #stillSignedIn(
    client: Client,
    live: (credential: Credential) => Promise<boolean>,
  ): Promise<boolean> {
    if (!client.credential) return !client.res.writableEnded;
    const ok = await live(client.credential);
    if (!ok) {
      this.#signOut(
        client,
        'what signed this stream in no longer does (key revoked or rotated, session signed out or expired)',
      );
    }
    return ok && !client.res.writableEnded;
  }

  /** Sends `client` a last `signed-out` event and ends its stream. */
  #signOut(client: Client, message: string): void {
    clearTimeout(client.expiry);
    this.#clients.delete(client);
    const { res } = client;
    if (!res.writableEnded) {
      res.end(`event: signed-out\ndata: ${JSON.stringify({ message })}\n\n`);
    }
    if (this.#clients.size === 0) this.#stop();
  }

  /** Delivers `events` to each stream whose credential still signs in, in order. */
  async #deliver(events: ServeEvent[]): Promise<void> {
    if (events.length === 0) return;
    const frames = events
      .map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
      .join('');
    const live = this.#liveness();
    await Promise.all(
      [...this.#clients].map(async (client) => {
        if (await this.#stillSignedIn(client, live)) client.res.write(frames);
      }),
    );
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
      for (const { res } of this.#clients) res.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.#keepalive.unref();
    this.#checker = setInterval(() => void this.recheck(), this.#checkMs);
    this.#checker.unref();
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
    clearInterval(this.#checker);
    this.#wakeUp();
  }

  async #snapshot(baseline: boolean): Promise<void> {
    const { pending, recent } = await this.#takeSnapshot();
    const next = new Map<string, Seen>();
    const out: ServeEvent[] = [];
    for (const view of recent) next.set(view.token, { rank: rankOf(view), view });
    for (const view of pending) next.set(view.token, { rank: 0, view });
    if (!baseline) {
      for (const [token, now] of next) {
        const seen = this.#seen.get(token);
        const before = seen?.rank ?? -1;
        if (now.rank > before) this.#emitTransitions(out, before, now);
        else if (seen && before === 0 && now.rank === 0) {
          this.#emitWaitChanges(out, seen.view as PauseView, now.view as PauseView);
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
    await this.#deliver(out);
  }

  /** What changed of a question that still waits: an approval, its reminder, its escalation. */
  #emitWaitChanges(out: ServeEvent[], was: PauseView, is: PauseView): void {
    const base = { token: is.token, conversationId: is.conversationId };
    const given = (v: PauseView) =>
      v.quorum ? v.quorum.approvals.length + v.quorum.declines.length : 0;
    if (is.quorum && given(is) > given(was)) {
      out.push({
        type: 'approval-recorded',
        ...base,
        approvals: is.quorum.approvals.length,
        needed: is.quorum.needed,
      });
    }
    if (is.reminder?.remindedAt && !was.reminder?.remindedAt) {
      out.push({ type: 'question-reminded', ...base });
    }
    if (is.escalation?.escalatedAt && !was.escalation?.escalatedAt) {
      const { names, roles } = is.escalation;
      out.push({ type: 'question-escalated', ...base, names, roles });
    }
  }

  #emitTransitions(out: ServeEvent[], before: number, now: Seen): void {
    const { view } = now;
    const action = 'answer' in view ? (view.answer?.action ?? null) : null;
    const base = { token: view.token, conversationId: view.conversationId };
    if (before < 0) {
      out.push({ type: 'pause-created', ...base, kind: view.kind, question: view.question });
    }
    if (before < 1 && now.rank >= 1) out.push({ type: 'pause-answered', ...base, action });
    if (before < 2 && now.rank >= 2) {
      const outcome = 'outcome' in view ? view.outcome : null;
      out.push({ type: 'run-resumed', ...base, action, outcome });
      if (outcome === 'completed') out.push({ type: 'run-completed', ...base });
    }
  }
}
