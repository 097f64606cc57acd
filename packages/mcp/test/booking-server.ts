import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** What the booking tool asks for. */
export const bookingSchema = {
  type: 'object' as const,
  properties: {
    date: { type: 'string' as const, format: 'date' as const, description: 'Day of the visit' },
    guests: { type: 'integer' as const, minimum: 1, maximum: 12 },
  },
  required: ['date', 'guests'],
};

/** What happened on the server side, for the tests to check. */
export interface BookingLog {
  /** Each run of the tool. */
  calls: number;
  /** How each elicitation ended: its result, or the error the request failed with. */
  outcomes: Array<{ action: string } | { error: string }>;
}

/**
 * An MCP server (the SDK's McpServer) whose `book_table` tool asks the person when and for
 * how many, waiting `timeout` ms for the answer.
 */
export function bookingServer(log: BookingLog, timeout = 600_000): McpServer {
  const server = new McpServer({ name: 'booking', version: '1.0.0' });
  server.registerTool('book_table', { description: 'Book a table.' }, async (extra) => {
    log.calls++;
    try {
      // The SDK client ignores a cancellation of request id 0 (it checks `!requestId`), so a
      // server that will time out spends id 0 on a ping first.
      if (timeout < 600_000) await server.server.ping();
      // On the tool call's own stream, so a client that resumes that stream gets it again.
      const answer = await server.server.elicitInput(
        { message: 'When, and for how many?', requestedSchema: bookingSchema },
        { timeout, relatedRequestId: extra.requestId },
      );
      log.outcomes.push({ action: answer.action });
      const text =
        answer.action === 'accept'
          ? `booked for ${answer.content?.guests} on ${answer.content?.date}`
          : `no booking (${answer.action})`;
      return { content: [{ type: 'text', text }] };
    } catch (error) {
      log.outcomes.push({ error: String(error) });
      throw error;
    }
  });
  return server;
}

/**
 * The booking server over Streamable HTTP with sessions and an event store, so a client
 * that reconnects with its session id can resume its streams (the SDK's own parts).
 */
export async function startBookingHttp(log: BookingLog) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      if (sessionId !== undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found' },
            id: null,
          }),
        );
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new InMemoryEventStore(),
        onsessioninitialized: (id) => {
          transports.set(id, created);
        },
      });
      transport = created;
      await bookingServer(log).connect(created);
    }
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    transports,
    close: async () => {
      for (const transport of transports.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
