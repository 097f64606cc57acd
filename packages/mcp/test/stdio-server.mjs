// An MCP server on the SDK's own stdio transport whose `ask` tool asks the person a question,
// waiting TIMEOUT ms, and appends how the request ended to FILE (its stdout is the client's).
// usage: node stdio-server.mjs FILE TIMEOUT watch|close-on-end
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const [file, timeout, mode] = process.argv.slice(2);
const note = (entry) => appendFileSync(file, `${JSON.stringify(entry)}\n`);
const server = new McpServer({ name: 'asker', version: '1.0.0' });
server.registerTool('ask', { description: 'Ask the person.' }, async () => {
  try {
    const answer = await server.server.elicitInput(
      {
        message: 'Go ahead?',
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      },
      { timeout: Number(timeout) },
    );
    note({ action: answer.action });
    return { content: [{ type: 'text', text: answer.action }] };
  } catch (error) {
    note({ error: String(error) });
    throw error;
  }
});
// The transport does not watch for the end of stdin: a server that should notice a client
// gone closes it then, and its open requests fail at once.
if (mode === 'close-on-end') process.stdin.on('end', () => server.close());
// Only notes what happens: without a listener, a write to the gone client ends the process.
if (mode === 'watch') {
  process.stdin.on('end', () => note({ stdin: 'end' }));
  process.stdout.on('error', (error) => note({ stdout: error.code }));
}
await server.connect(new StdioServerTransport());
note({ pid: process.pid });
