// An MCP client whose server asks the user; the question survives the client process:
//   node dist/client.js start <url>                       calls the tool; the server asks; saves; exits
//   node dist/client.js answer '{"date":"…","guests":4}'  (later) answers, comes back, gets the result
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { AskUserStore, migrate } from '@x/askuser';
import {
  answerElicitation,
  durableElicitations,
  McpElicitationError,
  pendingElicitations,
} from '@x/mcp';
import { drizzle } from 'drizzle-orm/pglite';

const dir = process.env.STATE_DIR ?? '.state';
// PGlite creates its data folder but not the folders above it.
mkdirSync(dir, { recursive: true });
const pglite = new PGlite(join(dir, 'pglite'));
const db = drizzle({ client: pglite });
await migrate(db);
const store = new AskUserStore(db);
const conversationId = 'dinner';
// What this app keeps to come back: the MCP session and where the tool call's stream was.
type Saved = { url: string; sessionId: string; resumptionToken: string };
const saved = join(dir, 'mcp-session.json');

const client = new Client({ name: 'agent', version: '1.0.0' });
const [command, arg = ''] = process.argv.slice(2);
if (command === 'start') {
  const transport = new StreamableHTTPClientTransport(new URL(arg));
  let resumptionToken = '';
  const asked = new Promise<string>((resolve) => {
    durableElicitations(client, {
      store,
      conversationId,
      onPause: (q) => resolve(`${q.message} ${JSON.stringify(q.requestedSchema.properties)}`),
      // DEADLINE_MS: unanswered by then, the server gets the default, decline (stored as expired).
      ...(process.env.DEADLINE_MS
        ? { deadline: { inMs: Number(process.env.DEADLINE_MS), answer: { action: 'decline' } } }
        : {}),
    });
  });
  await client.connect(transport);
  const call = client.callTool({ name: 'book_table', arguments: {} }, CallToolResultSchema, {
    onresumptiontoken: (token) => {
      resumptionToken = token;
    },
  });
  const outcome = await Promise.race([asked, call.then((result) => ({ result }))]);
  if (typeof outcome === 'string') {
    const state: Saved = { url: arg, sessionId: transport.sessionId ?? '', resumptionToken };
    writeFileSync(saved, JSON.stringify(state));
    console.log(`the server asks: ${outcome}`);
    call.catch(() => {}); // this process goes away; the server's request stays open
  } else console.log(JSON.stringify(outcome.result.content));
} else if (command === 'answer') {
  const { url, sessionId, resumptionToken } = JSON.parse(readFileSync(saved, 'utf8')) as Saved;
  // The operator's part: it could run anywhere that opens the store.
  const questions = await pendingElicitations(store, conversationId);
  if (questions.length === 0) {
    const [last] = (await store.listAnswered({ conversationId })).slice(-1);
    console.error(
      last
        ? `the question was already answered (${last.answer.action} ${last.answer.content} at ${last.resumedAt.toISOString()}): start a new booking with \`start\``
        : 'no question is waiting: run `start` first',
    );
    await pglite.close();
    process.exit(1);
  }
  try {
    for (const question of questions) {
      await answerElicitation(store, question.token, {
        action: 'accept',
        content: JSON.parse(arg),
      });
    }
  } catch (error) {
    // An answer that is not JSON or does not fit the form: say why, as the message says it.
    if (!(error instanceof SyntaxError) && !McpElicitationError.is(error)) throw error;
    console.error(`the answer was not taken: ${error.message}; the question still waits`);
    await pglite.close();
    process.exit(1);
  }
  // Come back to the same MCP session: the server still waits for the answer.
  const elicitations = durableElicitations(client, { store, conversationId });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { sessionId }));
  await elicitations.resume();
  const result = await client.request(
    { method: 'tools/call', params: { name: 'book_table' } },
    CallToolResultSchema,
    { resumptionToken },
  );
  console.log(result.content.map((part) => (part.type === 'text' ? part.text : '')).join(''));
} else console.error('usage: client.js start <url> | answer <json>');
await client.close();
await pglite.close();
