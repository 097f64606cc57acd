import { sqlStateOf } from './failure.js';

// Driver codes of a connection that dropped under a statement (postgres.js, Node's net).
const DROPPED = new Set(['CONNECTION_CLOSED', 'ECONNRESET', 'EPIPE']);

/**
 * True when `error` says the connection dropped, not that the statement failed: SQLSTATE
 * class 08 (connection exception), 57P01–57P03 (the server terminated or restarts), or a
 * driver's "connection closed". Looked up through drizzle's wrapper, never by message.
 */
export function isConnectionDrop(error: unknown): boolean {
  const state = sqlStateOf(error);
  if (state !== undefined) return state.startsWith('08') || /^57P0[123]$/.test(state);
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && DROPPED.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs a read, and once more if the connection dropped under it. Stock postgres.js (3.4.9)
 * also reports a dropped connection's error on the first statement of the next one, so a
 * read that never reached the dead connection can fail too; a second try goes through.
 * Only for statements that change nothing: a write is never repeated blindly.
 *
 * @example
 * const rows = await retryRead(() => db.select().from(table).where(eq(table.id, id)));
 */
export async function retryRead<T>(read: () => PromiseLike<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!isConnectionDrop(error)) throw error;
    return read();
  }
}
