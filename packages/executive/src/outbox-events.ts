import type { NotificationOutbox } from '@x/askuser';
import type { EventKind, ExecutiveEvent, ExecutiveEvents } from './events.js';

/** Which channels the events go to: the app's routing rules, passed in. */
export interface EventRouting {
  /** The channels `event` goes to, each once; none: nothing is written for it. */
  channels(event: ExecutiveEvent): readonly string[];
  /** Whether an event of `kind` could go to any channel: else a flow reads nothing for it. */
  wants(kind: EventKind): boolean;
}

/**
 * The events port over `@x/askuser`'s notification outbox: an event is written as one
 * notification per channel `routing` gives it (one event id, a Standard Webhooks payload),
 * inside the event's own transaction, so its notifications commit with it or not at all.
 * Delivering them is someone else's (a deliverer reading the outbox).
 *
 * @example
 * const events = outboxEvents(storage, {
 *   channels: (event) => (event.kind === 'run.failed' ? ['webhook'] : []),
 *   wants: (kind) => kind === 'run.failed',
 * });
 */
export function outboxEvents<Tx>(
  storage: { notifications(tx: Tx): NotificationOutbox },
  routing: EventRouting,
): ExecutiveEvents<Tx> {
  return {
    wants: (kind) => routing.wants(kind),
    async record(tx, event) {
      const channels = routing.channels(event);
      if (channels.length === 0) return;
      const eventId = `evt_${crypto.randomUUID()}`;
      const payload = { type: event.kind, timestamp: new Date().toISOString(), data: event.data };
      await storage
        .notifications(tx)
        .enqueue(channels.map((channel) => ({ eventId, kind: event.kind, channel, payload })));
    },
  };
}
