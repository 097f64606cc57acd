import { chmodSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { recordServing, SOCKET_FILE } from '../storage/via-serve.js';
import { answerClientError, inOrder } from './connections.js';

/** Requests that came in over the data folder's socket (their sender owns the folder). */
const overSocket = new WeakSet<IncomingMessage>();

/** True when `req` came in over the data folder's socket: its sender is the folder's owner. */
export function fromLocalSocket(req: IncomingMessage): boolean {
  return overSocket.has(req);
}

/** Longest socket path the kernel takes (`sun_path` is 108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 103;

/** The server on the data folder's socket, or why there is none. */
export type LocalSocket = { server: Server; path: string } | { skipped: string };

/**
 * Listens on `serve.sock` in the data folder `dir` (mode 0600: only its owner, and root, may
 * connect), marks each request as {@link fromLocalSocket}, and records the socket beside the
 * folder's lock so that commands of other processes find it. A socket it cannot make is
 * skipped (the reason returned): the HTTP API still serves.
 */
export async function listenLocal(
  dir: string,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  wake: boolean,
): Promise<LocalSocket> {
  const socket = path.join(dir, SOCKET_FILE);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    recordServing(dir, null, wake);
    return { skipped: `the data folder's path is too long for a socket (${socket})` };
  }
  // This process holds the folder's lock: a socket left there is a killed server's.
  rmSync(socket, { force: true });
  // In order, and Node's own refusals in the API's error shape, as on the TCP port; no
  // request timeout (only the folder's owner connects): an interactive command's body lasts
  // as long as the command.
  const server = createServer(
    { requestTimeout: 0 },
    inOrder((req, res) => {
      overSocket.add(req);
      handle(req, res);
    }),
  );
  server.on('clientError', answerClientError(undefined));
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Created without access for anyone else (Node binds within listen()), never open a moment.
    const umask = process.umask(0o177);
    try {
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
  });
  try {
    await listening;
    chmodSync(socket, 0o600);
    recordServing(dir, socket, wake);
  } catch (error) {
    server.close();
    rmSync(socket, { force: true });
    recordServing(dir, null, wake);
    return { skipped: `cannot listen on ${socket}: ${(error as Error).message}` };
  }
  return { server, path: socket };
}
