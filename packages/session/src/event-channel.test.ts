import type { StreamEvent } from '@x/wire';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEventChannel, SessionError } from './index.js';

const progress = (toolCallId: string, message: string): StreamEvent => ({
  type: 'tool-progress',
  toolCallId,
  message,
});
const text = (t: string): StreamEvent => ({ type: 'text-delta', text: t });
const ended: StreamEvent = { type: 'turn-ended', reason: 'completed' };
const raised = (id: string): StreamEvent => ({
  type: 'interrupt-raised',
  toolCallId: id,
  kind: 'ask_user',
  payload: null,
});

async function drain(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('createEventChannel', () => {
  it('delivers every event in order while the consumer keeps up', async () => {
    const { sink, events, stats } = createEventChannel({ capacity: 2 });
    const got: StreamEvent[] = [];
    const consumer = (async () => {
      for await (const e of events) got.push(e);
    })();
    for (let i = 0; i < 10; i++) {
      sink.emit(progress('c', `${i}`));
      await new Promise((r) => setImmediate(r));
    }
    sink.close();
    await consumer;
    expect(got.map((e) => (e.type === 'tool-progress' ? e.message : ''))).toEqual([
      ...'0123456789',
    ]);
    expect(stats).toMatchObject({ emitted: 10, delivered: 10, coalesced: 0, dropped: 0 });
  });

  it('coalesces consecutive progress of the same call into the latest', async () => {
    const { sink, events, stats } = createEventChannel({ capacity: 10 });
    sink.emit(progress('a', '1'));
    sink.emit(progress('a', '2'));
    sink.emit(progress('b', '1'));
    sink.emit(progress('b', '2'));
    sink.emit(progress('a', '3'));
    sink.close();
    expect(await drain(events)).toEqual([
      progress('a', '2'),
      progress('b', '2'),
      progress('a', '3'),
    ]);
    expect(stats).toMatchObject({ emitted: 5, coalesced: 2, delivered: 3, dropped: 0 });
  });

  it('appends adjacent text deltas without losing text', async () => {
    const { sink, events, stats } = createEventChannel({ capacity: 1 });
    sink.emit(text('Hel'));
    sink.emit(text('lo'));
    sink.emit(text(' world'));
    sink.close();
    expect(await drain(events)).toEqual([text('Hello world')]);
    expect(stats.coalesced).toBe(2);
  });

  it('a newer plan supersedes a queued older plan', async () => {
    const { sink, events, stats } = createEventChannel({ capacity: 10 });
    sink.emit({ type: 'plan-updated', todos: [] });
    sink.emit(text('a'));
    sink.emit({ type: 'plan-updated', todos: [{ id: '1', content: 'x', status: 'pending' }] });
    sink.close();
    expect(await drain(events)).toEqual([
      text('a'),
      { type: 'plan-updated', todos: [{ id: '1', content: 'x', status: 'pending' }] },
    ]);
    expect(stats.coalesced).toBe(1);
  });

  it('over capacity drops the oldest progress first, never interrupt or turn-ended events', async () => {
    const { sink, events, stats } = createEventChannel({ capacity: 3 });
    sink.emit(progress('a', '1'));
    sink.emit(raised('x'));
    sink.emit(progress('b', '1'));
    sink.emit(progress('c', '1'));
    sink.emit(raised('y'));
    sink.emit(ended);
    sink.close();
    expect(await drain(events)).toEqual([raised('x'), raised('y'), ended]);
    expect(stats).toMatchObject({ emitted: 6, dropped: 3, delivered: 3, highWater: 3 });
  });

  it('emit never blocks and never throws, even with no consumer at all', () => {
    const { sink, stats } = createEventChannel({ capacity: 4 });
    for (let i = 0; i < 100_000; i++) sink.emit(progress(`c${i % 7}`, `${i}`));
    expect(stats.buffered).toBeLessThanOrEqual(4);
    expect(stats.emitted).toBe(100_000);
  });

  it('after close, emits are discarded and counted; the consumer still gets what was queued', async () => {
    const { sink, events, stats } = createEventChannel({ capacity: 4 });
    sink.emit(text('a'));
    sink.close();
    sink.emit(text('b'));
    expect(sink.closed).toBe(true);
    expect(await drain(events)).toEqual([text('a')]);
    expect(stats.discarded).toBe(1);
  });

  it('a consumer that stops iterating closes the channel; queued events are counted as discarded', async () => {
    const { sink, events, stats } = createEventChannel({ capacity: 4 });
    sink.emit(text('a'));
    sink.emit(raised('x'));
    sink.emit(ended);
    for await (const _ of events) break;
    expect(sink.closed).toBe(true);
    sink.emit(text('late'));
    expect(stats).toMatchObject({ delivered: 1, discarded: 3 });
  });

  it('has a single consumer and a positive integer capacity', () => {
    const { events } = createEventChannel();
    events[Symbol.asyncIterator]();
    expect(() => events[Symbol.asyncIterator]()).toThrow(SessionError);
    expect(() => createEventChannel({ capacity: 0 })).toThrow(
      expect.objectContaining({ code: 'invalid' }),
    );
    expect(() => createEventChannel({ capacity: 1.5 })).toThrow(SessionError);
  });

  const eventArb: fc.Arbitrary<StreamEvent> = fc.oneof(
    fc.record({
      type: fc.constant('tool-progress' as const),
      toolCallId: fc.constantFrom('a', 'b'),
      message: fc.string(),
    }),
    fc.record({ type: fc.constant('text-delta' as const), text: fc.string({ maxLength: 3 }) }),
    fc.constant<StreamEvent>({ type: 'plan-updated', todos: [] }),
    fc.constantFrom<StreamEvent>(
      raised('x'),
      { type: 'interrupt-resolved', toolCallId: 'x', result: 1 },
      ended,
    ),
  );

  it('property: never loses lossless events, text or the last plan; bounded; every event accounted for', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { maxLength: 60 }),
        fc.integer({ min: 1, max: 6 }),
        async (input, capacity) => {
          const { sink, events, stats } = createEventChannel({ capacity });
          for (const e of input) sink.emit(e);
          const lossless = input.filter(
            (e) => e.type.startsWith('interrupt') || e.type === 'turn-ended',
          ).length;
          expect(stats.buffered).toBeLessThanOrEqual(capacity + 2 * lossless + 2);
          sink.close();
          const out = await drain(events);
          const keep = (e: StreamEvent) =>
            e.type.startsWith('interrupt') || e.type === 'turn-ended';
          expect(out.filter(keep)).toEqual(input.filter(keep));
          const allText = (list: StreamEvent[]) =>
            list.map((e) => (e.type === 'text-delta' ? e.text : '')).join('');
          expect(allText(out)).toBe(allText(input));
          const lastPlan = input.filter((e) => e.type === 'plan-updated').at(-1);
          expect(out.filter((e) => e.type === 'plan-updated').at(-1)).toEqual(lastPlan);
          expect(stats.delivered).toBe(out.length);
          expect(stats.emitted).toBe(input.length);
          expect(stats.delivered + stats.coalesced + stats.dropped).toBe(input.length);
        },
      ),
    );
  });
});
