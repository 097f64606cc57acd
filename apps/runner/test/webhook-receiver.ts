import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { startHttpReceiver } from '@internal/pg-test';

/** One request a {@link WebhookReceiver} got, and the status it answered. */
export interface Received {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A webhook receiver on 127.0.0.1 that answers each request with the status `answer` says. */
export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** The status of the `n`th request (0-based) of event `id`; 204 unless replaced. */
  answer: (id: string, n: number) => number;
  close(): Promise<void>;
}

/** A new `whsec_` secret, as a Standard Webhooks provider makes them. */
export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** Starts a receiver on a free port of 127.0.0.1 (@internal/pg-test's, as @x/notify's tests use). */
export async function startReceiver(): Promise<WebhookReceiver> {
  const seen = new Map<string, number>();
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    answer: () => 204,
    close: async () => {},
  };
  const http = await startHttpReceiver((res, request) => {
    const id = String(request.headers['webhook-id'] ?? '');
    const n = seen.get(id) ?? 0;
    seen.set(id, n + 1);
    const status = receiver.answer(id, n);
    receiver.received.push({ id, headers: request.headers, body: request.body, status });
    res.writeHead(status).end(status >= 400 ? 'receiver says no' : '');
  });
  receiver.url = `${http.url}hooks`;
  receiver.close = http.close;
  return receiver;
}
