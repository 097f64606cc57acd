import { type ChildProcess, spawn } from 'node:child_process';
import { Console } from 'node:console';
import type { EventEmitter } from 'node:events';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import type { OpenStorageOptions, Storage } from '../dist/storage/index.js';

/**
 * The built CLI: {@link runCli} runs it as the real `runner` binary, {@link runInProcess}
 * runs its `main` in the test's own process.
 */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The JSON lines of stdout (with --json). */
  events: Array<{ type: string } & Record<string, unknown>>;
}

/** The environment variable naming the run's migrated data folder (test/global-setup.ts). */
export const DATA_TEMPLATE_ENV = 'X_RUNNER_DATA_TEMPLATE';

/**
 * A data folder of the test's own for the embedded default: a copy of the run's migrated
 * template (as after a first command), or, with `empty`, a folder never used before.
 */
export function tempDataDir(options: { empty?: boolean } = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runner-test-'));
  if (!options.empty) copyDataTemplate(dir);
  return dir;
}

/**
 * Puts a copy of the run's migrated template at `dir`, for a `--data` a test names itself
 * (relative to its cwd) when what it checks is not the first use.
 */
export function copyDataTemplate(dir: string): void {
  const template = process.env[DATA_TEMPLATE_ENV];
  if (template) cpSync(template, dir, { recursive: true });
}

/** A maker of data folders (see {@link tempDataDir}), removed after the test file. */
export function dataDirs(): (options?: { empty?: boolean }) => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return (options = {}) => {
    const dir = tempDataDir(options);
    dirs.push(dir);
    return dir;
  };
}

/** Keeps what `child` prints, as `child.output`. */
// Remembered so that finished() on a child that closed already resolves instead of hanging.
const closes = new WeakMap<
  ChildProcess,
  Promise<{ code: number | null; signal: NodeJS.Signals | null }>
>();

function collecting(
  child: ChildProcess,
): ChildProcess & { output: { stdout: string; stderr: string } } {
  const collected = Object.assign(child, { output: { stdout: '', stderr: '' } });
  closes.set(
    child,
    new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal }));
    }),
  );
  child.stdout?.on('data', (d) => {
    collected.output.stdout += d;
  });
  child.stderr?.on('data', (d) => {
    collected.output.stderr += d;
  });
  return collected;
}

function parseEvents(stdout: string): CliResult['events'] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

/**
 * What a package manager's run tells the CLI about how it was started: cleared, so that
 * hints read the same whether the tests run under npx, pnpm or plain node.
 */
const LAUNCHER_ENV = {
  npm_config_user_agent: undefined,
  npm_command: undefined,
  npm_lifecycle_event: undefined,
  PNPM_PACKAGE_NAME: undefined,
};

/** Spawns the CLI; resolves when it exits. */
export function runCli(
  args: string[],
  options: { env?: Record<string, string | undefined>; input?: string; cwd?: string } = {},
): Promise<CliResult> {
  const child = startCli(args, options);
  return finished(child);
}

/** Starts the CLI and returns the process (for kill tests and concurrent runs). */
export function startCli(
  args: string[],
  options: { env?: Record<string, string | undefined>; input?: string; cwd?: string } = {},
): ChildProcess & { output: { stdout: string; stderr: string } } {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...LAUNCHER_ENV,
    NO_COLOR: '1',
    DATABASE_URL: '',
  };
  Object.assign(env, options.env);
  const spawned = spawn(process.execPath, [CLI, ...args], {
    env: env as NodeJS.ProcessEnv,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const child = collecting(spawned);
  if (options.input !== undefined) child.stdin?.end(options.input);
  return child;
}

/**
 * Runs a command line as a person would type it (through `sh -c`), e.g. a hint the CLI
 * printed, in `cwd`; resolves when it exits.
 */
export function runShell(
  line: string,
  options: { cwd: string; env?: Record<string, string | undefined>; input?: string },
): Promise<CliResult> {
  const spawned = spawn('sh', ['-c', line], {
    cwd: options.cwd,
    env: {
      ...process.env,
      ...LAUNCHER_ENV,
      NO_COLOR: '1',
      DATABASE_URL: '',
      ...options.env,
    } as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const child = collecting(spawned);
  child.stdin?.end(options.input ?? '');
  return finished(child);
}

/** Resolves when a started CLI exits. */
export function finished(
  child: ChildProcess & { output: { stdout: string; stderr: string } },
): Promise<CliResult> {
  const closed = closes.get(child);
  if (!closed) throw new Error('finished() takes a child started by startCli');
  return closed.then(({ code, signal }) => ({
    code,
    signal,
    stdout: child.output.stdout,
    stderr: child.output.stderr,
    events: parseEvents(child.output.stdout),
  }));
}

/** Resolves once the child's stdout contains `text`. */
export async function waitForOutput(
  child: ChildProcess & { output: { stdout: string } },
  text: string,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!child.output.stdout.includes(text)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      throw new Error(`timed out waiting for "${text}"; stdout so far:\n${child.output.stdout}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The settings a command of the tests runs with, over this process's environment. */
function commandEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...LAUNCHER_ENV,
    NO_COLOR: '1',
    DATABASE_URL: '',
    ...extra,
  };
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

/** The process's events a command may listen to: listeners it leaves behind are a leak. */
const PROCESS_EVENTS = ['SIGINT', 'SIGTERM', 'exit', 'beforeExit'];

/** The process as the emitter of {@link PROCESS_EVENTS}. */
const emitter = (): EventEmitter => process;

/** Thrown by `process.exit` inside {@link runInProcess}: it ends the command, not the tests. */
class ProcessExit extends Error {
  constructor(readonly code: number) {
    super(`process.exit(${code})`);
  }
}

/** Where Node's `fetch` keeps its connection pool (undici's global dispatcher). */
const DISPATCHER = Symbol.for('undici.globalDispatcher.1');
interface Dispatcher {
  destroy(): Promise<void>;
}

/**
 * Gives `fetch` a connection pool of the command's own, as a process of its own has, and
 * returns its end: a keep-alive connection the command opened is closed with it, never
 * reused by the next command or the test, nor left open.
 */
async function ownConnectionPool(): Promise<() => Promise<void>> {
  // Node loads fetch, and makes its pool, on its first call.
  await fetch('data:,');
  const global = globalThis as unknown as Record<symbol, Dispatcher>;
  const saved = global[DISPATCHER] as Dispatcher;
  const own = new (saved.constructor as new () => Dispatcher)();
  global[DISPATCHER] = own;
  return async () => {
    global[DISPATCHER] = saved;
    await own.destroy();
  };
}

/** What {@link runInProcess} takes besides the arguments. */
export interface InProcessOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
  /** A storage kept open across the commands given it ({@link sharedStorage}). */
  storage?: SharedStorage;
}

/** One storage that the in-process commands given it share, instead of each opening its own. */
export interface SharedStorage {
  /** The open storage for a command's options: the one held, or a new one if they differ. */
  open(options: OpenStorageOptions): Promise<Storage>;
  /** Closes it: before a process of its own opens the same data folder or database. */
  close(): Promise<void>;
  /** {@link runInProcess} on this storage (a function of its own, to be passed around). */
  run(args: string[], options?: Omit<InProcessOptions, 'storage'>): Promise<CliResult>;
  /** Handles the open storage holds (the first PGlite of a process has some): not a command's. */
  readonly handles: number;
}

/**
 * A storage that in-process commands share (closed after the test file): a command run in a
 * process of its own opens PGlite and checks the migrations each time, which is most of what
 * a short command costs. The one held is reused only by a command with the same data folder,
 * database and environment; another closes it and opens its own. It holds the data folder's
 * lock until {@link SharedStorage.close}, so a process that opens the folder meanwhile is
 * refused, as a second runner is; a test that writes the database itself closes it first.
 */
export function sharedStorage(): SharedStorage {
  let held: { key: string; storage: Storage; handles: number } | undefined;
  const shared: SharedStorage = {
    get handles() {
      return held?.handles ?? 0;
    },
    async open(options) {
      const env = Object.entries(process.env).sort(([a], [b]) => a.localeCompare(b));
      const key = JSON.stringify([path.resolve(options.dataDir), options.databaseUrl, env]);
      if (held?.key !== key) {
        await shared.close();
        const { openStorage } = await import('../dist/storage/index.js');
        const before = emitter().listeners('exit');
        const handles = process.getActiveResourcesInfo().length;
        const storage = await openStorage(options);
        // The lock's release on exit belongs to the storage, not to the command that opened it:
        // runInProcess would run it when that command ends. close() releases the lock.
        for (const listener of emitter().listeners('exit')) {
          if (!before.includes(listener)) emitter().off('exit', listener as () => void);
        }
        const opened = process.getActiveResourcesInfo().length - handles;
        held = { key, storage, handles: Math.max(0, opened) };
      }
      return { ...held.storage, close: async () => {} };
    },
    run: (args, options = {}) => runInProcess(args, { ...options, storage: shared }),
    async close() {
      const closing = held;
      held = undefined;
      await closing?.storage.close();
    },
  };
  afterAll(() => shared.close());
  return shared;
}

/** Commands run in this process one at a time: each owns the process's globals while it runs. */
let inProcessQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs the CLI's `main` in this process, as {@link runCli} runs the binary: the same
 * arguments, environment, standard input and working folder, its stdout and stderr captured,
 * its exit code returned. It saves the start-up of a process (Node, the CLI's modules) per
 * command, for tests about what a command does rather than about processes: a test that
 * kills, signals, locks against or runs commands side by side uses {@link startCli}.
 * Everything of the process a command may change (environment, argv, working folder,
 * standard streams, console, exit code, `process.exit`, listeners, the executive's
 * watchers, fetch's connection pool) is put back after it, and a command that leaves a
 * handle open fails.
 */
export function runInProcess(args: string[], options: InProcessOptions = {}): Promise<CliResult> {
  const run = inProcessQueue.then(() => inProcess(args, options));
  inProcessQueue = run.catch(() => {});
  return run;
}

async function inProcess(args: string[], options: InProcessOptions): Promise<CliResult> {
  const env = commandEnv(options.env);
  const shared = options.storage;
  // The scripted model counts its simulated outages per process, as the binary's one command.
  if (env.RUNNER_SCRIPTED_FAIL) throw new Error('RUNNER_SCRIPTED_FAIL needs runCli');
  const { main } = await import('../dist/cli.js');
  const { watching } = await import('../dist/executive/telemetry.js');
  const output = { stdout: '', stderr: '' };
  const sink = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk, _encoding, done) {
        output[name] += chunk;
        done();
      },
    });
  const stdout = sink('stdout');
  const stderr = sink('stderr');
  const stdin = Readable.from(options.input === undefined ? [] : [options.input]);
  const endPool = await ownConnectionPool();
  const saved = {
    env: { ...process.env },
    argv: process.argv,
    cwd: process.cwd(),
    exitCode: process.exitCode,
    exit: process.exit,
    console: globalThis.console,
    watching: { ...watching },
    streams: Object.fromEntries(
      (['stdin', 'stdout', 'stderr'] as const).map((name) => [
        name,
        Object.getOwnPropertyDescriptor(process, name) as PropertyDescriptor,
      ]),
    ),
    listeners: Object.fromEntries(
      PROCESS_EVENTS.map((event) => [event, emitter().listeners(event)]),
    ),
    resources: process.getActiveResourcesInfo().length - (shared?.handles ?? 0),
  };
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  Object.assign(process.env, env);
  process.argv = [process.execPath, CLI, ...args];
  if (options.cwd !== undefined) process.chdir(options.cwd);
  for (const [name, stream] of Object.entries({ stdin, stdout, stderr })) {
    Object.defineProperty(process, name, { value: stream, configurable: true, writable: true });
  }
  globalThis.console = new Console({ stdout, stderr });
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((resolve) => {
    exited = resolve;
  });
  process.exit = ((code?: number | string | null) => {
    exited(Number(code ?? process.exitCode ?? 0));
    throw new ProcessExit(Number(code ?? 0));
  }) as typeof process.exit;
  let code: number;
  let left: string[] = [];
  try {
    code = await Promise.race([
      main(args, shared && ((opening) => shared.open(opening))).catch((error: unknown) => {
        if (error instanceof ProcessExit) return error.code;
        throw error;
      }),
      exit,
    ]);
    // What the binary's exit runs (the data folder's lock released), then its listeners gone.
    for (const listener of added('exit')) (listener as (code: number) => void)(code);
  } finally {
    left = PROCESS_EVENTS.flatMap((event) =>
      added(event).map((listener) => {
        emitter().off(event, listener as () => void);
        return event;
      }),
    );
    process.exit = saved.exit;
    process.exitCode = saved.exitCode;
    globalThis.console = saved.console;
    for (const [name, descriptor] of Object.entries(saved.streams)) {
      Object.defineProperty(process, name, descriptor);
    }
    if (options.cwd !== undefined) process.chdir(saved.cwd);
    process.argv = saved.argv;
    for (const key of Object.keys(process.env)) if (!(key in saved.env)) delete process.env[key];
    Object.assign(process.env, saved.env);
    Object.assign(watching, saved.watching);
    for (const key of Object.keys(watching) as Array<keyof typeof watching>) {
      if (!(key in saved.watching)) delete watching[key];
    }
    stdin.destroy();
    await endPool();
  }
  if (left.some((event) => event !== 'exit')) {
    throw new Error(`runner ${args.join(' ')} left listeners on ${left.join(', ')}`);
  }
  await handlesClosed(saved.resources + (shared?.handles ?? 0), args);
  // Parsed when read: help texts hold lines that start with `{` and are not JSON.
  return {
    code,
    signal: null,
    ...output,
    get events() {
      return parseEvents(output.stdout);
    },
  };

  function added(event: string): Array<(...args: never) => unknown> {
    const before = saved.listeners[event] ?? [];
    const now = emitter().listeners(event) as Array<(...args: never) => unknown>;
    return now.filter((listener) => !before.includes(listener));
  }
}

/**
 * Waits for the handles a finished command closed to be gone (a socket's or a file's close
 * ends a turn or two later); fails naming those it left open, which would keep a process up.
 */
async function handlesClosed(before: number, args: string[]): Promise<void> {
  for (let turn = 0; turn < 100; turn++) {
    if (process.getActiveResourcesInfo().length <= before) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(
    `runner ${args.join(' ')} left handles open: ${process.getActiveResourcesInfo().join(', ')}`,
  );
}
