import { openPgliteTarget, type SqlTarget } from '@internal/pg-test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { AskUserError, AskUserStore, migrate } from '@x/askuser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type BookingLog,
  bookingSchema,
  bookingServer,
  startBookingHttp,
} from '../test/booking-server.js';
import {
  answerElicitation,
  type DurableElicitationsOptions,
  durableElicitations,
  type ElicitationContent,
  type ElicitationQuestion,
  McpElicitationError,
  pendingElicitations,
  SERVER_CANCELLED_MARKER,
  UNDELIVERABLE_MARKER,
} from './index.js';

let target: SqlTarget;
let store: AskUserStore;
let log: BookingLog;
let http: Awaited<ReturnType<typeof startBookingHttp>>;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  target = await openPgliteTarget();
  await migrate(target.db);
  store = new AskUserStore(target.db);
});
afterAll(() => target.close());
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let conversations = 0;

/** A client with durable elicitations; `asked` resolves with the first question it stores. */
function agent(
  conversationId: string,
  more: Partial<DurableElicitationsOptions> = {},
  capabilities: ClientCapabilities = {},
) {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { capabilities });
  let onPause: (q: ElicitationQuestion) => void = () => {};
  const asked = new Promise<ElicitationQuestion>((resolve) => {
    onPause = resolve;
  });
  const elicitations = durableElicitations(client, {
    store,
    conversationId,
    pollMs: 20,
    onPause,
    ...more,
  });
  cleanups.push(async () => {
    elicitations.close();
    await client.close();
  });
  return { client, elicitations, asked };
}

async function overHttp(
  conversationId: string,
  sessionId?: string,
  more: Partial<DurableElicitationsOptions> = {},
) {
  const a = agent(conversationId, more);
  const transport = new StreamableHTTPClientTransport(http.url, sessionId ? { sessionId } : {});
  await a.client.connect(transport);
  return { ...a, transport };
}

const text = (result: unknown) =>
  (result as { content: Array<{ text: string }> }).content.map((c) => c.text).join('');

describe('over Streamable HTTP', () => {
  beforeAll(async () => {
    log = { calls: 0, outcomes: [] };
    http = await startBookingHttp(log);
  });
  afterAll(() => http.close());

  it('stores the question with its schema, and the answer answers the server', async () => {
    const conversationId = `conv-${++conversations}`;
    const { client, elicitations, asked } = await overHttp(conversationId);
    const call = client.callTool({ name: 'book_table', arguments: {} });
    const question = await asked;
    expect(question).toMatchObject({
      conversationId,
      message: 'When, and for how many?',
      requestedSchema: bookingSchema,
      server: 'mcp',
    });
    const [pause] = await store.listPending(conversationId);
    expect(pause).toMatchObject({
      token: question.token,
      kind: 'elicitation',
      question: 'When, and for how many?',
      options: bookingSchema,
    });
    expect(await pendingElicitations(store, conversationId)).toEqual([
      { ...question, createdAt: pause?.createdAt },
    ]);

    await elicitations.answer(question.token, {
      action: 'accept',
      content: { date: '2026-07-01', guests: 4 },
    });
    expect(text(await call)).toBe('booked for 4 on 2026-07-01');
    expect((await store.getAnswer(question.token))?.answer).toEqual({
      action: 'accept',
      content: '{"date":"2026-07-01","guests":4}',
    });
  });

  it('refuses content the schema does not allow, and nothing changes; decline and cancel reach the server', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const { client, elicitations, asked } = await overHttp(`conv-${++conversations}`);
      const call = client.callTool({ name: 'book_table', arguments: {} });
      const { token } = await asked;
      const bad: ElicitationContent[] = [
        { date: '2026-07-01', guests: 40 },
        { guests: 2 },
        { date: 'soon', guests: 2 },
      ];
      for (const content of bad) {
        const answer = { action: 'accept', content } as const;
        const error = await answerElicitation(store, token, answer).catch((e: unknown) => e);
        expect(McpElicitationError.hasCode(error, 'invalid_content')).toBe(true);
      }
      const withContent = await answerElicitation(store, token, {
        action,
        content: {},
      } as never).catch((e: unknown) => e);
      expect(McpElicitationError.hasCode(withContent, 'invalid_answer')).toBe(true);
      expect(await store.getAnswer(token)).toBeUndefined();
      await elicitations.answer(token, { action });
      expect(text(await call)).toBe(`no booking (${action})`);
    }
  });

  it("a question's deadline: nobody answered in time, so its default answers the server, once, as expired", async () => {
    const conversationId = `conv-${++conversations}`;
    const { client, asked } = await overHttp(conversationId, undefined, {
      deadline: {
        inMs: 300,
        answer: { action: 'accept', content: { date: '2026-07-02', guests: 2 } },
      },
    });
    const call = client.callTool({ name: 'book_table', arguments: {} });
    const { token } = await asked;
    expect((await store.listPending(conversationId))[0]?.deadline).toMatchObject({
      answer: { action: 'accept', content: '{"date":"2026-07-02","guests":2}' },
    });
    expect(text(await call)).toBe('booked for 2 on 2026-07-02');
    const outcome = await store.getAnswer(token);
    expect(outcome?.expiredAt).toBeInstanceOf(Date);
    const late = await answerElicitation(store, token, { action: 'decline' }).catch(
      (e: unknown) => e,
    );
    expect(AskUserError.is(late)).toBe(true);
  });

  it('a deadline whose default does not fit the requested schema is refused, and nothing is stored', async () => {
    const conversationId = `conv-${++conversations}`;
    const { client } = await overHttp(conversationId, undefined, {
      deadline: { inMs: 300, answer: { action: 'accept', content: { guests: 99 } } },
    });
    const result = await client
      .callTool({ name: 'book_table', arguments: {} })
      .catch((e: unknown) => e);
    expect(JSON.stringify(result)).toMatch(/does not match the schema/);
    expect(await store.listPending(conversationId)).toEqual([]);
  });

  it('a client restart while the question waits: the answer given meanwhile reaches the server when the client comes back', async () => {
    const conversationId = `conv-${++conversations}`;
    const first = await overHttp(conversationId);
    let resumptionToken: string | undefined;
    const call = first.client
      .callTool({ name: 'book_table', arguments: {} }, CallToolResultSchema, {
        onresumptiontoken: (token) => {
          resumptionToken = token;
        },
      })
      .catch((error: unknown) => error);
    const { token } = await first.asked;
    const sessionId = first.transport.sessionId;
    // The process dies: its connection drops without ending the session.
    first.elicitations.close();
    await first.transport.close();
    expect(String(await call)).toMatch(/Connection closed/);

    // An operator answers from anywhere while no client is there.
    await answerElicitation(store, token, {
      action: 'accept',
      content: { date: '2026-08-02', guests: 2 },
    });

    const calls = log.calls;
    const second = await overHttp(conversationId, sessionId);
    expect(await second.elicitations.resume()).toEqual({
      delivered: [token],
      waiting: [],
      undeliverable: [],
    });
    // The tool call of the first process finishes on its resumed stream.
    const result = await second.client.request(
      { method: 'tools/call', params: { name: 'book_table', arguments: {} } },
      CallToolResultSchema,
      { resumptionToken: resumptionToken as string },
    );
    expect(text(result)).toBe('booked for 2 on 2026-08-02');
    expect(log.calls).toBe(calls); // the tool ran once, not again
    expect(log.outcomes.at(-1)).toEqual({ action: 'accept' });
  });

  it('a question still unanswered when the client comes back is sent as soon as it is answered', async () => {
    const conversationId = `conv-${++conversations}`;
    const first = await overHttp(conversationId);
    let resumptionToken = '';
    void first.client
      .callTool({ name: 'book_table', arguments: {} }, CallToolResultSchema, {
        onresumptiontoken: (token) => {
          resumptionToken = token;
        },
      })
      .catch(() => {});
    const { token } = await first.asked;
    const sessionId = first.transport.sessionId;
    first.elicitations.close();
    await first.transport.close();

    const second = await overHttp(conversationId, sessionId);
    expect(await second.elicitations.resume()).toEqual({
      delivered: [],
      waiting: [token],
      undeliverable: [],
    });
    const result = second.client.request(
      { method: 'tools/call', params: { name: 'book_table', arguments: {} } },
      CallToolResultSchema,
      { resumptionToken },
    );
    await answerElicitation(store, token, { action: 'decline' });
    expect(text(await result)).toBe('no booking (decline)');
  });
});

describe('a connection without sessions (stdio)', () => {
  it('dies with the client: the server request fails, and the question is closed as undeliverable when the client comes back', async () => {
    const conversationId = `conv-${++conversations}`;
    const serverLog: BookingLog = { calls: 0, outcomes: [] };
    // An in-memory pair closes both ends together, as a stdio pipe does when the client exits.
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await bookingServer(serverLog).connect(serverSide);
    const first = agent(conversationId);
    await first.client.connect(clientSide);
    const call = first.client
      .callTool({ name: 'book_table', arguments: {} })
      .catch((e: unknown) => e);
    const { token } = await first.asked;
    first.elicitations.close();
    await first.client.close();
    await call;
    expect(serverLog.outcomes).toEqual([{ error: expect.stringMatching(/Connection closed/) }]);

    // The client comes back with a new connection (and a new server process).
    const [clientSide2, serverSide2] = InMemoryTransport.createLinkedPair();
    await bookingServer({ calls: 0, outcomes: [] }).connect(serverSide2);
    const second = agent(conversationId);
    await second.client.connect(clientSide2);
    expect(await second.elicitations.resume()).toEqual({
      delivered: [],
      waiting: [],
      undeliverable: [token],
    });
    const [record] = (await store.listRecent(100)).filter((p) => p.token === token);
    expect(record?.answer).toEqual({ action: 'cancel', content: UNDELIVERABLE_MARKER });
    const late = await answerElicitation(store, token, { action: 'decline' }).catch(
      (e: unknown) => e,
    );
    expect(AskUserError.hasCode(late, 'not_found')).toBe(true);
  });
});

describe("the schema's defaults", () => {
  const partySchema = {
    type: 'object' as const,
    properties: { guests: { type: 'integer' as const, minimum: 1, default: 2 } },
    required: ['guests'],
  };

  /** A server whose `party` tool asks for a field that is required and has a default. */
  async function askParty(capabilities: ClientCapabilities) {
    const server = new McpServer({ name: 'party', version: '1.0.0' });
    server.registerTool('party', { description: 'How many come?' }, async () => {
      const answer = await server.server.elicitInput({
        message: 'How many?',
        requestedSchema: partySchema,
      });
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const a = agent(`conv-${++conversations}`, {}, capabilities);
    await a.client.connect(clientSide);
    const call = a.client.callTool({ name: 'party', arguments: {} });
    return { ...a, call, announced: server.server.getClientCapabilities()?.elicitation };
  }

  it('a client that applies defaults keeps saying so, and an empty accept is answered with the default', async () => {
    const { announced, asked, call } = await askParty({
      elicitation: { form: { applyDefaults: true } },
    });
    expect(announced).toEqual({ form: { applyDefaults: true } });
    const { token } = await asked;
    await answerElicitation(store, token, { action: 'accept', content: {} });
    expect(text(await call)).toBe('{"action":"accept","content":{"guests":2}}');
    expect((await store.getAnswer(token))?.answer.content).toBe('{"guests":2}');
  });

  it('a client that does not apply defaults: an empty accept for a required field is refused', async () => {
    const { announced, asked, elicitations, call } = await askParty({});
    expect(announced).toEqual({ form: {} });
    const { token } = await asked;
    const empty = await answerElicitation(store, token, { action: 'accept', content: {} }).catch(
      (e: unknown) => e,
    );
    expect(McpElicitationError.hasCode(empty, 'invalid_content')).toBe(true);
    await elicitations.answer(token, { action: 'accept', content: { guests: 3 } });
    expect(text(await call)).toBe('{"action":"accept","content":{"guests":3}}');
  });
});

describe('the server gives up', () => {
  it('a request the server cancels (its timeout) closes the question as cancelled by the server', async () => {
    const conversationId = `conv-${++conversations}`;
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await bookingServer({ calls: 0, outcomes: [] }, 100).connect(serverSide);
    const a = agent(conversationId);
    await a.client.connect(clientSide);
    const result = await a.client.callTool({ name: 'book_table', arguments: {} });
    expect(result.isError).toBe(true);
    const { token } = await a.asked;
    for (let i = 0; i < 100 && (await store.getAnswer(token)) === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const answered = await store.getAnswer(token);
    expect(answered?.answer.action).toBe('cancel');
    expect(answered?.answer.content.startsWith(SERVER_CANCELLED_MARKER)).toBe(true);
  });
});

describe('refusals', () => {
  it('a token that is no elicitation, and resume before connect', async () => {
    await store.insert({
      token: 'plain-1',
      conversationId: 'conv-x',
      kind: 'ask_user',
      question: 'Colour?',
      toolCallId: 'call_1',
    });
    const error = await answerElicitation(store, 'plain-1', { action: 'decline' }).catch(
      (e: unknown) => e,
    );
    expect(McpElicitationError.hasCode(error, 'not_elicitation')).toBe(true);
    const { elicitations } = agent('conv-y');
    const notConnected = await elicitations.resume().catch((e: unknown) => e);
    expect(McpElicitationError.hasCode(notConnected, 'not_connected')).toBe(true);
  });
});
