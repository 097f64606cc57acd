import { type ExecutiveEvents, outboxEvents as executiveOutbox } from '@x/executive';
import { anyRouteFor, channelsFor } from '@x/notify';
import { notifyRules } from '../config/index.js';
import type { Db, Storage } from '../storage/index.js';

/**
 * The executive's events port over the notification outbox of `storage` (`outboxEvents` of
 * `@x/executive`), routed by the runner's rules (RUNNER_NOTIFY): an event's notifications go
 * to the channels @x/notify's `channelsFor` gives it, in the event's own transaction; an
 * event no rule takes is not wanted.
 */
export function outboxEvents(storage: Storage): ExecutiveEvents<Db> {
  return executiveOutbox(storage, {
    channels: (event) => channelsFor(notifyRules(), event),
    wants: (kind) => anyRouteFor(notifyRules(), kind),
  });
}
