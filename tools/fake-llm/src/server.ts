import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicMessage, anthropicStream, openaiCompletion, openaiStream } from './replies.js';
import { type Protocol, readTurn, type Script } from './turn.js';

/** One request as the server received it. */
export interface RecordedRequest {
  protocol: Protocol;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** A running fake model server. */
export interface FakeLlm {
  /** `http://127.0.0.1:PORT`: the Anthropic SDK's base URL; OpenAI's is this plus `/v1`. */
  url: string;
  /** Every model request, in order. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Writes the events one at a time, so the client reads a stream, not one body. */
function writeEvents(res: ServerResponse, events: string[]): void {
  const [first, ...rest] = events;
  if (first === undefined) {
    res.end();
    return;
  }
  res.write(first);
  setImmediate(() => writeEvents(res, rest));
}

/**
 * Starts a model server on a free local port that answers `POST …/messages` (Anthropic
 * Messages API) and `POST …/chat/completions` (OpenAI Chat Completions) with JSON, or with
 * the API's Server-Sent Events when the request asks for `stream: true`. Each answer is what
 * `script` decides from the conversation in the request. Anything else is an error in the
 * API's error shape.
 */
export async function startFakeLlm(script: Script): Promise<FakeLlm> {
  const requests: RecordedRequest[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => {
      raw += chunk.toString('utf8');
    });
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const protocol: Protocol | undefined = path.endsWith('/messages')
        ? 'anthropic'
        : path.endsWith('/chat/completions')
          ? 'openai'
          : undefined;
      if (req.method !== 'POST' || protocol === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'not_found_error', message: `no ${path} here` } }));
        return;
      }
      let body: Record<string, unknown>;
      let action: ReturnType<Script>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
        requests.push({ protocol, path, headers: req.headers, body });
        action = script(readTurn(protocol, body));
      } catch (error) {
        res.writeHead(400, { 'content-type': 'application/json' });
        const message = `fake model: ${error instanceof Error ? error.message : String(error)}`;
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message } }));
        return;
      }
      calls++;
      const model = String(body.model ?? 'fake');
      const id = protocol === 'anthropic' ? `toolu_fake_${calls}` : `call_fake_${calls}`;
      if (body.stream === true) {
        const includeUsage =
          (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
        const events =
          protocol === 'anthropic'
            ? anthropicStream(action, id, model)
            : openaiStream(action, id, model, includeUsage);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        writeEvents(res, events);
        return;
      }
      const reply =
        protocol === 'anthropic'
          ? anthropicMessage(action, id, model)
          : openaiCompletion(action, id, model);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
