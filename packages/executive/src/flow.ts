import type { ExecutiveEvents } from './events.js';
import type { ExecutiveDatabase, ExecutiveStorage } from './storage.js';

/**
 * What every flow writes through: the storage, and the events port its announcements go to
 * in the same transactions (e.g. `outboxEvents` with your routing).
 */
export interface FlowContext {
  storage: ExecutiveStorage;
  events: ExecutiveEvents<ExecutiveDatabase>;
}
