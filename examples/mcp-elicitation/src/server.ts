// A booking MCP server over Streamable HTTP (the SDK's own classes): its tool asks the
// user when and for how many (elicitation), and waits up to a day for the answer.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

function bookingServer(): McpServer {
  const server = new McpServer({ name: 'booking', version: '1.0.0' });
  server.registerTool('book_table', { description: 'Book a table.' }, async (extra) => {
    console.log('book_table called');
    const answer = await server.server.elicitInput(
      {
        message: 'When, and for how many?',
        requestedSchema: {
          type: 'object',
          properties: {
            date: { type: 'string', format: 'date' },
            guests: { type: 'integer', minimum: 1, maximum: 12 },
          },
          required: ['date', 'guests'],
        },
      },
      // On the tool call's stream, so a client that comes back can resume it; a day to answer.
      { relatedRequestId: extra.requestId, timeout: 24 * 3600_000 },
    );
    const text =
      answer.action === 'accept'
        ? `Booked for ${answer.content?.guests} on ${answer.content?.date}.`
        : `No booking (${answer.action}).`;
    return { content: [{ type: 'text', text }] };
  });
  return server;
}

// One transport per MCP session; the event store lets a client resume a dropped stream.
const sessions = new Map<string, StreamableHTTPServerTransport>();
const http = createServer(async (req, res) => {
  const id = req.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? sessions.get(id) : undefined;
  if (!transport) {
    if (id !== undefined)
      return void res
        .writeHead(404)
        .end('{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}');
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      eventStore: new InMemoryEventStore(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
    });
    transport = created;
    await bookingServer().connect(created);
  }
  await transport.handleRequest(req, res);
});
http.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`MCP server at http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
