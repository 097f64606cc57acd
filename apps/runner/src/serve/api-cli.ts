import type { IncomingMessage, ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { ApprovalCenterError } from '@x/approval-center';
import { baseHeaders, checkWrite, readJson } from '@x/approval-center/http';
import { z } from 'zod';
import type { HostedCommand, HostedFrame, InputFrame } from '../storage/via-serve.js';
import type { LineReader } from '../terminal/lines.js';
import type { Sink } from '../terminal/output.js';
import { fromLocalSocket } from './local-socket.js';

/**
 * Runs a command sent over the socket in this process, its output to `sinks` (and, for an
 * interactive one, its input from `sinks.lines`); its exit code.
 */
export type HostedCommandRunner = (
  command: HostedCommand,
  sinks: { stdout: Sink; stderr: Sink; lines?: LineReader },
) => Promise<number>;

/** Goal files and answer batches travel in the body: more than the API's other writes. */
const MAX_COMMAND_BYTES = 4 * 1024 * 1024;

const hostedCommandSchema = z.object({
  argv: z.array(z.string()).min(1),
  modelId: z.string(),
  prefix: z.string(),
  suffix: z.string().optional(),
  tty: z.boolean(),
  policy: z.record(z.string(), z.string()).optional(),
  inputs: z.record(
    z.string(),
    z.union([
      z.object({ text: z.string() }),
      z.object({ error: z.object({ code: z.string().optional(), message: z.string() }) }),
    ]),
  ),
});

/** The media type of an interactive command's body: the command, then its input lines. */
const INTERACTIVE = 'application/x-ndjson';

/**
 * `POST /api/cli`, over the data folder's socket only: runs a `runner` command here, on the
 * storage this server holds, and streams what it prints back as NDJSON frames
 * ({@link HostedFrame}), the exit code last. An NDJSON body is an interactive command
 * (chat): its first line is the command, each further line a line typed at the caller's
 * terminal ({@link InputFrame}), sent when the command asks for it.
 */
export async function answerHostedCommand(
  runHostedCommand: HostedCommandRunner | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  stopping?: AbortSignal,
): Promise<void> {
  if (!fromLocalSocket(req) || !runHostedCommand) {
    throw new ApprovalCenterError('not_found', 'no API route /api/cli');
  }
  const interactive =
    (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === INTERACTIVE;
  if (!interactive) checkWrite(req);
  const input = interactive ? inputLines(req, stopping) : undefined;
  const parsed = hostedCommandSchema.safeParse(
    input ? await input.first() : await readJson(req, MAX_COMMAND_BYTES),
  );
  if (!parsed.success) {
    throw new ApprovalCenterError(
      'invalid_request',
      `invalid command: ${z.prettifyError(parsed.error)}`,
    );
  }
  const command = parsed.data as HostedCommand;
  res.writeHead(200, { ...baseHeaders, 'content-type': 'application/x-ndjson' });
  // A caller that went away (Ctrl-C) does not stop the command: what it started goes on.
  const send = (frame: HostedFrame) => res.destroyed || res.write(`${JSON.stringify(frame)}\n`);
  const exit = await runHostedCommand(command, {
    stdout: { isTTY: command.tty, write: (text) => send({ out: text }) },
    stderr: { write: (text) => send({ err: text }) },
    ...(input ? { lines: input.reader((prompt) => send({ ask: prompt })) } : {}),
  });
  input?.close();
  send({ exit });
  res.end();
}

/**
 * The lines of an interactive command's body: `first()` the command, then a
 * {@link LineReader} whose `next` asks the caller for a line and waits for it (`null` at the
 * end of the body, when the caller went away, or once serve is `stopping`: as at the end of
 * a terminal's input, so a chat leaves its question waiting and says how to resume it).
 */
function inputLines(req: IncomingMessage, stopping?: AbortSignal) {
  const rl = createInterface({ input: req, crlfDelay: Number.POSITIVE_INFINITY });
  const lines = rl[Symbol.asyncIterator]();
  // One promise for the whole command: a listener per line would pile up on the signal.
  const stopped = aborted(stopping);
  const nextFrame = async (): Promise<string | null> => {
    const { value, done } = await lines.next().catch(() => ({ value: undefined, done: true }));
    return done ? null : (value as string);
  };
  return {
    async first(): Promise<unknown> {
      const line = await nextFrame();
      if (line === null || Buffer.byteLength(line) > MAX_COMMAND_BYTES) {
        throw new ApprovalCenterError(
          'invalid_request',
          `an interactive command's body starts with the command: one JSON line of at most ${MAX_COMMAND_BYTES} bytes`,
        );
      }
      try {
        return JSON.parse(line);
      } catch (error) {
        throw new ApprovalCenterError(
          'invalid_json',
          `the command is not valid JSON: ${(error as Error).message}`,
        );
      }
    },
    reader(ask: (prompt: string) => void): LineReader {
      let ended = false;
      return {
        async next(prompt) {
          if (ended || stopping?.aborted) return null;
          ask(prompt);
          const line = await Promise.race([nextFrame(), stopped]);
          let frame: InputFrame | undefined;
          try {
            frame = line === null ? undefined : (JSON.parse(line) as InputFrame);
          } catch {
            frame = undefined;
          }
          if (frame && 'line' in frame && typeof frame.line === 'string') return frame.line;
          ended = true;
          return null;
        },
        close() {
          ended = true;
        },
      };
    },
    close: () => rl.close(),
  };
}

/** Resolves with `null` when `signal` aborts (never without one). */
function aborted(signal: AbortSignal | undefined): Promise<null> {
  return new Promise((resolve) =>
    signal?.addEventListener('abort', () => resolve(null), { once: true }),
  );
}
