/**
 * Calls `onNotify` whenever one of `channels` is notified (LISTEN/NOTIFY) and resolves, once
 * listening, to the function that stops it: how a {@link RunWorker} is woken, independent
 * of the driver. {@link listenPostgresJs} and {@link listenPglite} make one from a client.
 */
export type RunQueueListen = (
  channels: readonly string[],
  onNotify: () => void,
) => Promise<() => Promise<void>>;

/** What {@link listenPostgresJs} needs of a postgres.js `sql`. */
export interface PostgresJsListener {
  listen(
    channel: string,
    onNotify: (payload: string) => void,
  ): PromiseLike<{
    unlisten(): Promise<void>;
  }>;
}

/** What {@link listenPglite} needs of a PGlite instance. */
export interface PgliteListener {
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * LISTEN through a postgres.js client (`postgres(url)`), which keeps a connection of its own
 * for it and listens again after a reconnect. Not through a transaction-mode pooler: give it
 * a client of a direct connection there.
 *
 * @example
 * const worker = new RunWorker({ queue, listen: listenPostgresJs(sql), resume });
 */
export function listenPostgresJs(sql: PostgresJsListener): RunQueueListen {
  return subscribeEach(async (channel, onNotify) => {
    const subscription = await sql.listen(channel, () => onNotify());
    return () => subscription.unlisten();
  });
}

/**
 * LISTEN on a PGlite database: notifications of its own statements (one process's
 * database), e.g. a run released or an answer given in the same process.
 *
 * @example
 * const worker = new RunWorker({ queue, listen: listenPglite(pglite), resume });
 */
export function listenPglite(pglite: PgliteListener): RunQueueListen {
  return subscribeEach((channel, onNotify) => pglite.listen(channel, () => onNotify()));
}

function subscribeEach(
  one: (channel: string, onNotify: () => void) => Promise<() => Promise<void>>,
): RunQueueListen {
  return async (channels, onNotify) => {
    const stops: Array<() => Promise<void>> = [];
    try {
      for (const channel of channels) stops.push(await one(channel, onNotify));
    } catch (error) {
      await Promise.allSettled(stops.map((stop) => stop()));
      throw error;
    }
    return async () => {
      await Promise.all(stops.map((stop) => stop()));
    };
  };
}
