import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type ClientCapabilities,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { AskUserError, type AskUserStore, type ResumeAnswer } from '@x/askuser';
import {
  answerElicitation,
  checkAnswer,
  type ElicitationAnswer,
  toElicitResult,
} from './answer.js';
import { McpElicitationError } from './errors.js';
import {
  ELICITATION_KIND,
  type ElicitationContext,
  type ElicitationQuestion,
  pauseOf,
  readQuestion,
  SERVER_CANCELLED_MARKER,
  UNDELIVERABLE_MARKER,
} from './question.js';

/** Options of {@link durableElicitations}. */
export interface DurableElicitationsOptions {
  /** Where the questions are kept (PostgreSQL or PGlite; `migrate` run). */
  store: AskUserStore;
  /** The pauses' `conversationId`: your agent's conversation, so `listPending` shows them. */
  conversationId: string;
  /** A name for the server, kept with each pause; `resume` looks at its own. Default `'mcp'`. */
  server?: string;
  /** How often a waiting request looks for its answer, in ms. Default 1000. */
  pollMs?: number;
  /** Called once a question is stored, before waiting: tell someone, or let the process go. */
  onPause?: (question: ElicitationQuestion) => void;
  /**
   * How long each question waits, and the answer sent to the server when nobody answered in
   * time (an `accept` must match the requested schema): kept with the pause as its deadline,
   * so the outcome is `expired` in the store, once, whichever process applies it. A pause's
   * deadline is honoured on `resume()` too. Default: none, a question waits until answered.
   */
  deadline?: { inMs: number; answer: ElicitationAnswer };
}

/** What {@link DurableElicitations.resume} found and did. */
export interface ResumeReport {
  /** Answered while the client was away: the answers were sent to the server now. */
  delivered: string[];
  /** Still unanswered, on this session: each answer is sent when it comes. */
  waiting: string[];
  /** Unanswered, from a connection that is gone: closed as cancelled ({@link UNDELIVERABLE_MARKER}). */
  undeliverable: string[];
}

/** The handle {@link durableElicitations} returns. */
export interface DurableElicitations {
  /**
   * After a restart, once the client is connected again: answers the questions asked on
   * this connection's MCP session (sent now if answered, else as soon as they are), and
   * closes those of connections that are gone. Of the answered ones, each answer of this
   * session is sent again: the server takes the first response to a request and ignores
   * any later one.
   *
   * @throws {McpElicitationError} `not_connected` before `client.connect`.
   */
  resume(): Promise<ResumeReport>;
  /** {@link answerElicitation}, and a request waiting in this process gets it at once. */
  answer(token: string, answer: ElicitationAnswer): Promise<void>;
  /** Stops waiting (questions stay open in the store). */
  close(): void;
}

// Stdio has no session id: each transport gets an id of its own, so that a restart (a new
// transport) can tell its connection's questions from those of the connection that is gone.
const connectionIds = new WeakMap<Transport, string>();

function connectionOf(transport: Transport): string {
  if (transport.sessionId) return transport.sessionId;
  let id = connectionIds.get(transport);
  if (id === undefined) {
    id = `conn-${randomUUID()}`;
    connectionIds.set(transport, id);
  }
  return id;
}

// The SDK (1.x) has no getter for a client's own capabilities; it keeps them in this field.
function ownCapabilities(client: Client): ClientCapabilities {
  return (client as unknown as { _capabilities?: ClientCapabilities })._capabilities ?? {};
}

/**
 * Makes an MCP client's elicitations durable: each `elicitation/create` request from the
 * server becomes an `@x/askuser` pause (kind `elicitation`, the requested schema in
 * `options`, the request's session and id in `resumeContext`), and the request is answered
 * with the pause's answer once someone gives it (`answerElicitation`, from any process).
 * Registers the client's form elicitation capability, keeping what the client set there
 * (`form: { applyDefaults: true }`): call it before `client.connect`.
 *
 * A question outlives the client process. After a restart, reconnect to the same MCP
 * session (Streamable HTTP: pass the session id to the transport) and call `resume()`:
 * the server's request, still open on its side, gets its answer. A connection that cannot
 * come back (stdio, or a session the server ended) took the request with it: `resume()`
 * closes its questions as undeliverable.
 *
 * @example
 * const client = new Client({ name: 'agent', version: '1.0.0' });
 * const elicitations = durableElicitations(client, { store, conversationId: 'conv-1' });
 * await client.connect(new StreamableHTTPClientTransport(new URL(url)));
 * const result = await client.callTool({ name: 'book_table', arguments: {} }); // may wait days
 */
export function durableElicitations(
  client: Client,
  options: DurableElicitationsOptions,
): DurableElicitations {
  const { store, conversationId } = options;
  const server = options.server ?? 'mcp';
  const pollMs = options.pollMs ?? 1000;
  const closed = new AbortController();
  const wakers = new Map<string, Set<() => void>>();
  // The SDK merges capabilities one level deep: the form settings the client already has
  // (applyDefaults) are passed along, or registering form would drop them.
  const elicitation = ownCapabilities(client).elicitation;
  client.registerCapabilities({ elicitation: { ...elicitation, form: { ...elicitation?.form } } });

  async function waitForAnswer(
    token: string,
    signal: AbortSignal,
    deadline?: Date,
  ): Promise<ResumeAnswer> {
    for (;;) {
      signal.throwIfAborted();
      closed.signal.throwIfAborted();
      const answered = await store.getAnswer(token);
      if (answered) return answered.answer;
      // At the deadline the store applies its default once (or finds the answer that won).
      if (deadline && deadline.getTime() <= Date.now()) {
        const outcome = await store.expire(token);
        if (outcome) return outcome.answer;
      }
      const left = deadline ? Math.max(0, deadline.getTime() - Date.now()) : pollMs;
      await new Promise<void>((resolve) => {
        const set = wakers.get(token) ?? new Set();
        wakers.set(token, set);
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          closed.signal.removeEventListener('abort', done);
          set.delete(done);
          if (set.size === 0) wakers.delete(token);
          resolve();
        };
        const timer = setTimeout(done, Math.min(pollMs, left));
        signal.addEventListener('abort', done);
        closed.signal.addEventListener('abort', done);
        set.add(done);
      });
    }
  }

  async function closeAs(token: string, content: string): Promise<boolean> {
    try {
      await store.markResumed(token, { action: 'cancel', content });
      return true;
    } catch (error) {
      if (AskUserError.hasCode(error, 'not_found')) return false; // answered meanwhile
      throw error;
    }
  }

  function send(transport: Transport, question: ElicitationQuestion, answer: ResumeAnswer) {
    return transport.send({
      jsonrpc: '2.0',
      id: question.requestId,
      result: toElicitResult(answer),
    });
  }

  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const { params } = request;
    const transport = client.transport;
    if (params.mode === 'url' || transport === undefined) {
      throw new McpError(ErrorCode.InvalidParams, 'only form elicitation is supported');
    }
    const connection = extra.sessionId ?? connectionOf(transport);
    const context: ElicitationContext = {
      version: 1,
      server,
      connection,
      requestId: extra.requestId,
    };
    if (extra.sessionId !== undefined) context.sessionId = extra.sessionId;
    if (ownCapabilities(client).elicitation?.form?.applyDefaults) context.applyDefaults = true;
    const token = `mcp-${connection}-${extra.requestId}`;
    const pause = pauseOf(token, conversationId, params, context);
    const question: ElicitationQuestion = {
      token,
      conversationId,
      message: params.message,
      requestedSchema: params.requestedSchema,
      server,
      requestId: extra.requestId,
      connection,
      createdAt: new Date(),
      ...(extra.sessionId === undefined ? {} : { sessionId: extra.sessionId }),
      ...(context.applyDefaults ? { applyDefaults: true } : {}),
    };
    // A default that does not fit this request's schema is refused before anything is stored.
    const deadline = options.deadline && {
      at: new Date(Date.now() + options.deadline.inMs),
      answer: checkAnswer(question, options.deadline.answer),
    };
    try {
      await store.insert({ ...pause, ...(deadline ? { deadline } : {}) });
    } catch (error) {
      if (!AskUserError.hasCode(error, 'duplicate')) throw error; // a replayed request: its question is kept
    }
    options.onPause?.(question);
    try {
      return toElicitResult(await waitForAnswer(token, extra.signal, deadline?.at));
    } catch (error) {
      // The SDK cancels with a string reason; a closed connection aborts without one.
      const reason: unknown = extra.signal.reason;
      if (extra.signal.aborted && typeof reason === 'string') {
        await closeAs(token, `${SERVER_CANCELLED_MARKER} ${reason}`);
      }
      throw error;
    }
  });

  return {
    async resume() {
      const transport = client.transport;
      if (transport === undefined) {
        throw new McpElicitationError(
          'not_connected',
          'resume() needs a connected client: call client.connect first',
        );
      }
      const connection = connectionOf(transport);
      const report: ResumeReport = { delivered: [], waiting: [], undeliverable: [] };
      const ours = (kind: string) => kind === ELICITATION_KIND;
      for (const pause of await store.listPending(conversationId)) {
        if (!ours(pause.kind)) continue;
        const question = readQuestion(pause);
        if (question.server !== server) continue;
        if (question.connection === connection) {
          report.waiting.push(question.token);
          waitForAnswer(question.token, closed.signal, pause.deadline?.at)
            .then((answer) => send(transport, question, answer))
            .catch((error: unknown) => {
              if (!closed.signal.aborted) client.onerror?.(error as Error);
            });
        } else if (await closeAs(question.token, UNDELIVERABLE_MARKER)) {
          report.undeliverable.push(question.token);
        }
      }
      for (const pause of await store.listAnswered({ conversationId, limit: 1000 })) {
        if (!ours(pause.kind)) continue;
        const question = readQuestion(pause);
        if (question.server !== server || question.connection !== connection) continue;
        await send(transport, question, pause.answer);
        report.delivered.push(question.token);
      }
      return report;
    },
    async answer(token, answer) {
      await answerElicitation(store, token, answer);
      for (const wake of wakers.get(token) ?? []) wake();
    },
    close() {
      closed.abort();
    },
  };
}
