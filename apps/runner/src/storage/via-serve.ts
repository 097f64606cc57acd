import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RunnerError } from '../errors.js';
import type { LineReader } from '../terminal/lines.js';
import { alive, lockHolder } from './data-lock.js';

/** The socket `runner serve` listens on inside the data folder it holds. */
export const SOCKET_FILE = 'serve.sock';

/** The record beside the folder's lock that names the serve behind the socket. */
const RECORD_FILE = 'serve.json';

/** A live `runner serve` that holds a data folder, and its socket. */
export interface Serving {
  pid: number;
  /**
   * `null`: this serve has no socket (see its log): commands cannot reach it; `starting`: it
   * is opening the folder and will listen soon.
   */
  socket: string | null | 'starting';
  /** Whether this serve hosts the wake loop (not `--no-wake`). */
  wake?: boolean;
}

/** What a command sends to serve: its arguments and what it would read from this machine. */
export interface HostedCommand {
  /** The command line after `runner` (e.g. `["runs", "--json"]`). */
  argv: string[];
  /** The model id the command would use (its `--model` or RUNNER_MODEL). */
  modelId: string;
  /** How hints invoke the runner, and what they repeat after the command (`--data DIR`). */
  prefix: string;
  suffix?: string;
  /** Whether the caller's standard output is a terminal (colours). */
  tty: boolean;
  /** The question policy variables set here (RUNNER_AUDIENCE, RUNNER_DEADLINE, ...), as given. */
  policy?: Record<string, string>;
  /** Files (and `-`, standard input) the command reads, as read here, or why not. */
  inputs: Record<string, { text: string } | { error: { code?: string; message: string } }>;
}

/**
 * One line of serve's answer to a {@link HostedCommand}: output, then the exit code; `ask`:
 * an interactive command (chat) reads a line of the caller's input, with this prompt.
 */
export type HostedFrame = { out: string } | { err: string } | { ask: string } | { exit: number };

/** One line the caller of an interactive command sends after it: a line typed, or the end. */
export type InputFrame = { line: string } | { end: true };

/**
 * Records that this process serves the folder `dir` on `socket`, hosting the wake loop or
 * not (written whole, by rename).
 */
export function recordServing(dir: string, socket: Serving['socket'], wake?: boolean): void {
  const draft = path.join(dir, `${RECORD_FILE}.${process.pid}`);
  writeFileSync(draft, JSON.stringify({ pid: process.pid, socket, wake } satisfies Serving));
  renameSync(draft, path.join(dir, RECORD_FILE));
}

/** Removes the socket and its record: called by whoever holds the folder's lock. */
export function forgetServing(dir: string): void {
  rmSync(path.join(dir, RECORD_FILE), { force: true });
  rmSync(path.join(dir, SOCKET_FILE), { force: true });
}

/** How long a command waits for a serve that is opening the folder to listen. */
const STARTING_MS = 60_000;

/**
 * The live serve that holds the data folder `dataDir`, if one does; a serve that holds the
 * lock but is still opening the folder is waited for (up to a minute), as a person who just
 * started it in another terminal expects.
 */
export async function servingHolder(
  dataDir: string,
): Promise<(Serving & { socket: string }) | undefined> {
  const dir = path.resolve(dataDir);
  for (;;) {
    const holder = lockHolder(dir);
    if (holder?.command !== 'serve' || !alive(holder.pid)) return undefined;
    const record = readRecord(dir);
    // A record left by a serve that was killed names a pid that no longer holds the lock.
    if (record?.pid !== holder.pid || record.socket === null) return undefined;
    if (record.socket !== 'starting') return { ...record, socket: record.socket };
    if (Date.now() - Date.parse(holder.since) > STARTING_MS) return undefined;
    await sleep(100);
  }
}

function readRecord(dir: string): Serving | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, RECORD_FILE), 'utf8')) as Serving;
  } catch {
    return undefined;
  }
}

/** Where a hosted command's output goes here. */
interface Sinks {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * Sends `command` to `serving` and writes what it prints to `sinks`; resolves with its exit
 * code, or `undefined` when serve could not be reached (nothing was sent: the caller may
 * open the folder itself). Nothing is ever sent twice. With `lines` the command is
 * interactive: the request stays open and each line serve asks for is read here and sent
 * after the command ({@link InputFrame}), so the terminal stays this process's.
 * @throws a RunnerError `unavailable` when serve ended before the command did.
 */
export function sendToServe(
  serving: Serving & { socket: string },
  command: HostedCommand,
  sinks: Sinks,
  lines?: LineReader,
): Promise<number | undefined> {
  const name = `\`runner ${command.argv[0]}\``;
  const lost = (why: string) =>
    new RunnerError(
      'unavailable',
      `the connection to serve (pid ${serving.pid}) broke before ${name} finished (${why}): ` +
        'what it did so far stands and nothing is sent again; see `runner runs` for the runs it recorded',
    );
  return new Promise((resolve, reject) => {
    let reached = false;
    const body = JSON.stringify(command);
    const req = request({
      socketPath: serving.socket,
      method: 'POST',
      path: '/api/cli',
      headers: {
        // One command, one connection: serve's graceful stop never waits on an idle one.
        connection: 'close',
        ...(lines
          ? { 'content-type': 'application/x-ndjson' }
          : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
      },
    });
    const send = (frame: InputFrame) => {
      if (req.writableEnded) return;
      if ('end' in frame) req.end(`${JSON.stringify(frame)}\n`);
      else req.write(`${JSON.stringify(frame)}\n`);
    };
    const ask = (prompt: string) =>
      void lines?.next(prompt).then((line) => send(line === null ? { end: true } : { line }));
    req.on('socket', (socket) => socket.once('connect', () => (reached = true)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!reached) resolve(undefined);
      else reject(lost(error.code ?? error.message));
    });
    req.on('response', (res) => {
      let partial = '';
      let exit: number | undefined;
      const failed = res.statusCode !== 200;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        partial += chunk;
        if (failed) return;
        const lines = partial.split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          if (!line) continue;
          const frame = JSON.parse(line) as HostedFrame;
          if ('out' in frame) sinks.stdout.write(frame.out);
          else if ('err' in frame) sinks.stderr.write(frame.err);
          else if ('ask' in frame) ask(frame.ask);
          else exit = frame.exit;
        }
      });
      res.on('error', (error: NodeJS.ErrnoException) => reject(lost(error.code ?? error.message)));
      res.on('close', () => {
        lines?.close();
        if (failed) {
          reject(
            new RunnerError(
              'unavailable',
              `serve (pid ${serving.pid}) refused ${name}: ${errorMessage(partial) ?? `HTTP ${res.statusCode}`}`,
            ),
          );
        } else if (exit === undefined) reject(lost('it ended'));
        else resolve(exit);
      });
    });
    if (lines) req.write(`${body}\n`);
    else req.end(body);
  });
}

function errorMessage(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { error?: { message?: string } }).error?.message;
  } catch {
    return undefined;
  }
}
