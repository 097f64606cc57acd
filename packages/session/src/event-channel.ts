import type { StreamEvent } from '@x/wire';
import { SessionError } from './errors.js';
import { describeValue, optionOf } from './guard.js';

/** Where a turn puts its stream events. `emit` never blocks and never throws. */
export interface EventSink {
  /** Queues an event for the consumer (see {@link createEventChannel} for the overflow policy). */
  emit(event: StreamEvent): void;
  /** Ends the stream: the consumer gets what is queued, then the end. Later emits are discarded. */
  close(): void;
  /** True once closed (by the producer or because the consumer stopped iterating). */
  readonly closed: boolean;
}

/** Counters of an event channel, live. Every event emitted ends up in exactly one bucket. */
export interface EventChannelStats {
  /** Events handed to `emit`. */
  emitted: number;
  /** Events (possibly merged ones) handed to the consumer. */
  delivered: number;
  /** Events folded into a queued one (progress per call, adjacent text, superseded plans). */
  coalesced: number;
  /** `tool-progress` events dropped, oldest first, because the queue was over capacity. */
  dropped: number;
  /** Events emitted after close, or still queued when the consumer stopped iterating. */
  discarded: number;
  /** Events queued now. */
  buffered: number;
  /** The largest number of events ever queued at once. */
  highWater: number;
}

/** A bounded, non-blocking stream of one turn's events. */
export interface EventChannel {
  /** Give this to the turn ({@link Runtime}). */
  sink: EventSink;
  /** The consumer's side; iterate it once. Breaking out of the loop closes the channel. */
  events: AsyncIterable<StreamEvent>;
  /** Live counters; see {@link EventChannelStats}. */
  readonly stats: Readonly<EventChannelStats>;
}

/** Options of {@link createEventChannel}. */
export interface EventChannelOptions {
  /** How many events may wait for a slow consumer before progress updates are dropped. Default 256. */
  capacity?: number;
}

// Events a consumer must never miss: they change what the host has to do next.
function isLossless(event: StreamEvent): boolean {
  return event.type !== 'tool-progress';
}

/**
 * Creates the bounded channel between a turn and its consumer (a UI, a log). Emitting never
 * blocks the turn and the queue never grows without bound. While the consumer keeps up,
 * every event is delivered as emitted. When it falls behind, in this order:
 *
 * 1. a `tool-progress` event replaces a queued `tool-progress` of the same call at the tail
 *    (only the latest progress of a call matters);
 * 2. a `text-delta` is appended to a queued `text-delta` at the tail (no text is lost);
 * 3. a `plan-updated` removes the queued, older `plan-updated` events (the latest plan wins);
 * 4. past `capacity`, the oldest queued `tool-progress` is dropped.
 *
 * `interrupt-raised`, `interrupt-resolved`, `turn-ended`, text and the latest plan are never
 * dropped; with no progress left to drop they may exceed `capacity`, which a turn can only
 * do by a bounded amount (at most one plan, one text run between two lossless events, one
 * event per interrupt and one `turn-ended`). Every fold, drop and discard is counted in
 * {@link EventChannel.stats}.
 *
 * @throws {SessionError} `invalid` for a capacity that is not a positive integer.
 * @example
 * const { sink, events, stats } = createEventChannel({ capacity: 64 });
 * const runtime = createRuntime({ session, events: sink }).withToolCall('toolu_1');
 * (async () => { for await (const event of events) render(event); })();
 * runtime.emitUpdate('halfway');
 * sink.close();
 */
export function createEventChannel(options: EventChannelOptions = {}): EventChannel {
  const given = optionOf(options, 'capacity', 'event channel options') ?? 256;
  if (typeof given !== 'number' || !Number.isInteger(given) || given < 1) {
    throw new SessionError(
      'invalid',
      `event channel capacity must be a positive integer, got ${typeof given === 'number' ? given : describeValue(given)}`,
    );
  }
  const capacity = given;
  const stats: EventChannelStats = {
    emitted: 0,
    delivered: 0,
    coalesced: 0,
    dropped: 0,
    discarded: 0,
    buffered: 0,
    highWater: 0,
  };
  const queue: StreamEvent[] = [];
  let closed = false;
  let iterated = false;
  let waiter: ((result: IteratorResult<StreamEvent>) => void) | undefined;

  function mergeTextAt(index: number): void {
    const before = queue[index - 1];
    const after = queue[index];
    if (before?.type === 'text-delta' && after?.type === 'text-delta') {
      queue.splice(index - 1, 2, { type: 'text-delta', text: before.text + after.text });
      stats.coalesced++;
    }
  }

  function enqueue(event: StreamEvent): void {
    const tail = queue[queue.length - 1];
    if (
      event.type === 'tool-progress' &&
      tail?.type === 'tool-progress' &&
      tail.toolCallId === event.toolCallId
    ) {
      queue[queue.length - 1] = event;
      stats.coalesced++;
      return;
    }
    if (event.type === 'text-delta' && tail?.type === 'text-delta') {
      queue[queue.length - 1] = { type: 'text-delta', text: tail.text + event.text };
      stats.coalesced++;
      return;
    }
    if (event.type === 'plan-updated') {
      for (let i = queue.length - 1; i >= 0; i--) {
        if (queue[i]?.type === 'plan-updated') {
          queue.splice(i, 1);
          stats.coalesced++;
          mergeTextAt(i);
        }
      }
    }
    queue.push(event);
    if (queue.length > capacity) {
      const oldest = queue.findIndex((queued) => !isLossless(queued));
      if (oldest >= 0) {
        queue.splice(oldest, 1);
        stats.dropped++;
        mergeTextAt(oldest);
      }
    }
  }

  const sink: EventSink = {
    emit(event) {
      if (closed) {
        stats.discarded++;
        return;
      }
      stats.emitted++;
      if (waiter !== undefined && queue.length === 0) {
        const wake = waiter;
        waiter = undefined;
        stats.delivered++;
        wake({ value: event, done: false });
        return;
      }
      enqueue(event);
      stats.buffered = queue.length;
      stats.highWater = Math.max(stats.highWater, queue.length);
    },
    close() {
      closed = true;
      if (waiter !== undefined && queue.length === 0) {
        const wake = waiter;
        waiter = undefined;
        wake({ value: undefined, done: true });
      }
    },
    get closed() {
      return closed;
    },
  };

  const events: AsyncIterable<StreamEvent> = {
    [Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
      if (iterated) {
        throw new SessionError(
          'invalid',
          'an event channel has one consumer: iterate `events` once',
        );
      }
      iterated = true;
      return {
        next() {
          const event = queue.shift();
          if (event !== undefined) {
            stats.buffered = queue.length;
            stats.delivered++;
            return Promise.resolve({ value: event, done: false });
          }
          if (closed) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => {
            waiter = resolve;
          });
        },
        return() {
          closed = true;
          stats.discarded += queue.length;
          queue.length = 0;
          stats.buffered = 0;
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };

  return { sink, events, stats };
}
