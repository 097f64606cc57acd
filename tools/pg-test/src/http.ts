import { request } from 'node:http';

/** A reply read to its end. */
export interface RawReply {
  status: number;
  body: string;
}

/** Sends `body` as the bytes given (fetch would re-encode a string) and reads the reply. */
export function sendBytes(
  url: string,
  method: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers: body ? { 'content-type': 'application/json', ...headers } : headers },
      (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One Server-Sent Event: its name and its JSON data. */
export interface StreamedEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Reads the Server-Sent Events of `url` into a list, until the server ends it or `close()`. */
export async function listenEvents(url: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const events: StreamedEvent[] = [];
  let endedByServer = false;
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const pump = (async () => {
    try {
      for (;;) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (event) events.push({ event, data: data ? JSON.parse(data) : {} });
        }
      }
      endedByServer = true;
    } catch {
      // Aborted by close().
    }
  })();
  return {
    response,
    events,
    /** Settles when the server ends the stream (or `close()` aborts it). */
    ended: pump,
    /** Whether the server, not `close()`, ended the stream. */
    endedByServer: () => endedByServer,
    async close() {
      controller.abort();
      await pump;
    },
  };
}
