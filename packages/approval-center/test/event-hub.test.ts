import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type Credential, EventHub, type LiveSnapshot, type PauseView } from '../src/index.js';

const servers: Server[] = [];
const hubs: EventHub[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

/** A pending question as the feed compares it (only the fields it reads are set). */
function pending(token: string): PauseView {
  return {
    token,
    conversationId: `c-${token}`,
    kind: 'question',
    question: 'Ship it?',
  } as PauseView;
}

/** Serves the hub's stream and reads it: the next frame whose event is `type`, in order. */
async function openStream(hub: EventHub, credential?: Credential) {
  const server = createServer((_req, res) => void hub.subscribe(res, credential));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  return {
    response,
    async next(type: string): Promise<unknown> {
      for (;;) {
        const frames = buffered.split('\n\n');
        buffered = frames.pop() ?? '';
        for (const [i, frame] of frames.entries()) {
          const event = /^event: (.+)$/m.exec(frame)?.[1];
          if (event !== type) continue;
          buffered = `${frames.slice(i + 1).join('\n\n')}${frames.length > i + 1 ? '\n\n' : ''}${buffered}`;
          return JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? 'null');
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before a ${type} event`);
        buffered += value;
      }
    },
  };
}

describe('EventHub: the live feed of the questions', () => {
  it('sends each change of the snapshots once, as events', async () => {
    const now: LiveSnapshot = { pending: [], recent: [] };
    const hub = new EventHub({ snapshot: async () => now, pollMs: 60_000, onError: () => {} });
    hubs.push(hub);
    const stream = await openStream(hub);
    expect(stream.response.headers.get('content-type')).toContain('text/event-stream');
    await stream.next('ready');
    now.pending = [pending('t1')];
    hub.poke();
    expect(await stream.next('pause-created')).toEqual({
      type: 'pause-created',
      token: 't1',
      conversationId: 'c-t1',
      kind: 'question',
      question: 'Ship it?',
    });
  });

  it('ends a stream whose credential stops signing in, with a signed-out event', async () => {
    let live = true;
    const hub = new EventHub({
      snapshot: async () => ({ pending: [], recent: [] }),
      pollMs: 60_000,
      onError: () => {},
    });
    hubs.push(hub);
    const stream = await openStream(hub, { id: 'key:1', live: async () => live });
    await stream.next('ready');
    live = false;
    await hub.recheck();
    expect(await stream.next('signed-out')).toHaveProperty('message');
  });
});
