// An MCP client on @x/mcp for the official conformance suite: the suite starts it with its
// server's URL and names the scenario in MCP_CONFORMANCE_SCENARIO. Every elicitation becomes
// an @x/askuser question (PGlite in memory), answered `accept` with no content as soon as it
// is stored, so the schema's defaults are what the server gets.
// usage: node client.mjs SERVER_URL
import { PGlite } from '@electric-sql/pglite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AskUserStore, migrate } from '@x/askuser';
import { answerElicitation, durableElicitations } from '@x/mcp';
import { drizzle } from 'drizzle-orm/pglite';

const [serverUrl] = process.argv.slice(2);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
if (!serverUrl || !scenario) {
  console.error('usage: MCP_CONFORMANCE_SCENARIO=NAME node client.mjs SERVER_URL');
  process.exit(2);
}

const pglite = new PGlite();
const db = drizzle({ client: pglite });
await migrate(db);
const store = new AskUserStore(db);
const client = new Client(
  { name: 'x-mcp-conformance', version: '1.0.0' },
  { capabilities: { elicitation: { form: { applyDefaults: true } } } },
);
durableElicitations(client, {
  store,
  conversationId: 'conformance',
  onPause: (question) =>
    answerElicitation(store, question.token, { action: 'accept', content: {} }),
});
await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl)));
const { tools } = await client.listTools();
// The scenarios' servers check what they receive; a tool the scenario does not know is an error.
const toolArguments = { add_numbers: { a: 5, b: 3 } };
if (scenario !== 'initialize') {
  for (const tool of tools) {
    const result = await client.callTool({
      name: tool.name,
      arguments: toolArguments[tool.name] ?? {},
    });
    console.log(`${tool.name}: ${JSON.stringify(result.content)}`);
  }
}
await client.close();
await pglite.close();
