import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Sink } from '../cli/output.js';
import type { HostedCommand, HostedFrame } from '../storage/via-serve.js';
import { baseHeaders, checkWrite, readJson } from './http.js';
import { HttpError } from './http-error.js';
import { fromLocalSocket } from './local-socket.js';

/** Runs a command sent over the socket in this process, its output to `sinks`; its exit code. */
export type HostCommand = (
  command: HostedCommand,
  sinks: { stdout: Sink; stderr: Sink },
) => Promise<number>;

/** Goal files and answer batches travel in the body: more than the API's other writes. */
const MAX_COMMAND_BYTES = 4 * 1024 * 1024;

const hostedCommandSchema = z.object({
  argv: z.array(z.string()).min(1),
  modelId: z.string(),
  prefix: z.string(),
  suffix: z.string().optional(),
  tty: z.boolean(),
  inputs: z.record(
    z.string(),
    z.union([
      z.object({ text: z.string() }),
      z.object({ error: z.object({ code: z.string().optional(), message: z.string() }) }),
    ]),
  ),
});

/**
 * `POST /api/cli`, over the data folder's socket only: runs a `runner` command here, on the
 * storage this server holds, and streams what it prints back as NDJSON frames
 * ({@link HostedFrame}), the exit code last.
 */
export async function answerHostedCommand(
  hostCommand: HostCommand | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (!fromLocalSocket(req) || !hostCommand) {
    throw new HttpError(404, 'not_found', 'no API route /api/cli');
  }
  checkWrite(req);
  const parsed = hostedCommandSchema.safeParse(await readJson(req, MAX_COMMAND_BYTES));
  if (!parsed.success) {
    throw new HttpError(
      400,
      'invalid_request',
      `invalid command: ${z.prettifyError(parsed.error)}`,
    );
  }
  const command = parsed.data as HostedCommand;
  res.writeHead(200, { ...baseHeaders, 'content-type': 'application/x-ndjson' });
  // A caller that went away (Ctrl-C) does not stop the command: what it started goes on.
  const send = (frame: HostedFrame) => res.destroyed || res.write(`${JSON.stringify(frame)}\n`);
  const exit = await hostCommand(command, {
    stdout: { isTTY: command.tty, write: (text) => send({ out: text }) },
    stderr: { write: (text) => send({ err: text }) },
  });
  send({ exit });
  res.end();
}
