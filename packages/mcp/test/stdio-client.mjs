// An MCP client on @x/mcp (PGlite in memory) that starts stdio-server.mjs as its child, calls
// its `ask` tool and prints `asked TOKEN` once the question is stored; the test then kills it.
// usage: node stdio-client.mjs FILE TIMEOUT watch|close-on-end
import { PGlite } from '@electric-sql/pglite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AskUserStore, migrate } from '@x/askuser';
import { durableElicitations } from '@x/mcp';
import { drizzle } from 'drizzle-orm/pglite';

const db = drizzle({ client: new PGlite() });
await migrate(db);
const client = new Client({ name: 'agent', version: '1.0.0' });
durableElicitations(client, {
  store: new AskUserStore(db),
  conversationId: 'conv-stdio',
  onPause: (question) => console.log(`asked ${question.token}`),
});
const server = new URL('./stdio-server.mjs', import.meta.url).pathname;
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [server, ...process.argv.slice(2)],
    stderr: 'inherit',
  }),
);
await client.callTool({ name: 'ask', arguments: {} });
