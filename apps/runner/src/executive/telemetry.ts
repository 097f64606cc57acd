import type { Watching } from '@x/executive';

/**
 * The process's watchers, if any: set once at start by a command that exports metrics or
 * traces. Unset (the default) every hook is one property read, nothing is allocated.
 */
export const watching: Watching = {};
