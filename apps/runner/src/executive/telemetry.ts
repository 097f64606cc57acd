import type { AnsweredQuestion, Pending } from '@x/askuser';
import { type HumanWait, traceWait as traceWaitOf, type Watching } from '@x/executive';

/**
 * The process's watchers, if any: set once at start by a command that exports metrics or
 * traces. Unset (the default) every hook is one property read, nothing is allocated.
 */
export const watching: Watching = {};

/** Records the wait of an answered or expired question, when traces are on. */
export function traceWait(pause: AnsweredQuestion | Pending, outcome?: HumanWait['outcome']): void {
  traceWaitOf(watching, pause, outcome);
}
