import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request an {@link HttpReceiver} took. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A real HTTP server on 127.0.0.1 (a webhook receiver, a Web API) that keeps each request. */
export interface HttpReceiver {
  /** `http://127.0.0.1:PORT/`. */
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * Starts an {@link HttpReceiver} on a free port; `answer` writes each response, once the body
 * is read (the requests so far include this one).
 */
export async function startHttpReceiver(
  answer: (res: ServerResponse, request: ReceivedRequest, requests: ReceivedRequest[]) => void,
): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
    requests.push(request);
    answer(res, request, requests);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
