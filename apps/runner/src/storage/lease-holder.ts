import { type ContinuationDatabase, takeHolderLock } from '@x/continuation-postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';

/** This process's lease-holder lock on PostgreSQL: the key its claims name. */
export interface LeaseHolderLock {
  /** The holder key, taking the lock on first use; undefined while the server cannot be reached. */
  key(): Promise<number | undefined>;
  close(): Promise<void>;
}

// One key per process, kept across the storages a wake loop reopens after an outage: its
// own runs in flight stay its own.
let processKey: number | undefined;

/**
 * Holds the lease-holder lock on a connection of its own to `url` (a direct one: a
 * transaction-mode pooler would leave the lock on a server connection others reuse). When
 * that connection closes (the server ended it, a restart) the lock is taken again on a new
 * one, retried every second: until then other workers may take this process's runs, and
 * the lease fence refuses what this process writes for them.
 */
export function holdLeaseLock(url: string): LeaseHolderLock {
  let closed = false;
  let taking: Promise<number | undefined> | undefined;
  let held = false;
  const take = (): Promise<number | undefined> => {
    taking ??= takeHolderLock(session, processKey)
      .then((key) => {
        processKey = key;
        held = true;
        return key;
      })
      .catch(() => undefined)
      .finally(() => {
        taking = undefined;
      });
    return taking;
  };
  const retake = async () => {
    held = false;
    while (!closed && (await take()) === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
    }
  };
  const client = postgres(url, {
    max: 1,
    // The lock lives as long as the connection: never recycled.
    max_lifetime: null,
    idle_timeout: 0,
    onnotice: () => {},
    onclose: () => {
      if (!closed && held) void retake();
    },
  });
  const session = drizzle({ client }) as unknown as ContinuationDatabase;
  return {
    async key() {
      if (held) return processKey;
      return take();
    },
    async close() {
      closed = true;
      await client.end({ timeout: 5 });
    },
  };
}
