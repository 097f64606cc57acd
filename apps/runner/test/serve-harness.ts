import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

import { runInProcess } from './run-cli.js';

export { dataDirs } from './run-cli.js';

/** The built CLI (RUNNER_TEST_CLI may point at another build of it). */
export const CLI =
  process.env.RUNNER_TEST_CLI ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** A `runner` process started by a test, with what it printed so far. */
export interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the CLI with `args` (DATABASE_URL cleared unless `env` sets it). */
export function start(args: string[], env: Record<string, string | undefined> = {}): Started {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: {
      ...process.env,
      NO_COLOR: '1',
      DATABASE_URL: '',
      RUNNER_TOKEN: '',
      ...env,
    } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Runs a command to its end in this process ({@link runInProcess}): what these tests check is
 * what a command did, not the process it ran in, and a process of its own per command costs
 * Node's start-up and the CLI's modules each time.
 */
export function run(args: string[], env: Record<string, string | undefined> = {}) {
  return runInProcess(args, { env: { RUNNER_TOKEN: '', ...env } });
}

/** Waits until `check` returns a value (not undefined/false), polling every 50 ms. */
export async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A running `runner serve` and the URL it printed. */
export interface Served extends Started {
  url: string;
}

/** Starts `runner serve --port 0 --json ...` and waits for the URL it listens on. */
export async function serve(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<Served> {
  const started = start(['serve', '--port', '0', '--json', ...args], env);
  const url = await until(
    () => {
      if (started.child.exitCode !== null) {
        throw new Error(`runner serve exited ${started.child.exitCode}: ${started.stderr()}`);
      }
      const line = started
        .stdout()
        .split('\n')
        .find((l) => l.includes('"type":"listening"'));
      return line ? (JSON.parse(line) as { url: string }).url : undefined;
    },
    'runner serve to listen',
    60_000,
  );
  return { ...started, url };
}

/** Starts a conversation with `runner exec` and returns the token it waits on. */
export async function exec(
  conversation: string,
  options: { data?: string; env?: Record<string, string | undefined> } = {},
): Promise<string> {
  const args = ['exec', 'Plan a trip', '--conversation', conversation, '--json'];
  if (options.data) args.push('--data', options.data);
  const result = await run(args, options.env);
  const waiting = result.events.find((e) => e.type === 'run-waiting');
  if (result.code !== 0 || !waiting) {
    throw new Error(`runner exec failed (${result.code}): ${result.stderr}`);
  }
  return waiting.token as string;
}

/** Reads Server-Sent Events from `url` into a list, until the server ends it or `close()`. */
export { listenEvents as listen } from '@internal/pg-test';

/** The token of the first pending question of `conversation` (other than `except`), if any. */
export async function pendingOf(
  serverUrl: string,
  conversation: string,
  except: string[] = [],
): Promise<string | undefined> {
  const res = await fetch(new URL('/api/pauses', serverUrl));
  const { pauses } = (await res.json()) as {
    pauses: Array<{ token: string; conversationId: string }>;
  };
  return pauses.find((p) => p.conversationId === conversation && !except.includes(p.token))?.token;
}

/** A worker's question as a parent's `delegate` call relays it (the pause of issue #17). */
export const workerPause = {
  token: 'worker-q-1',
  conversationId: 'trip-team',
  kind: 'ask_user',
  question: 'Which dates work for the flights?',
  toolCallId: 'call_delegate_1',
  proxiedFromChildId: 'w2',
  proxiedToolCallId: 'call_w2_ask',
  resumeContext: {
    delegate: { toolCallId: 'call_delegate_1', worker: 'w2', task: 'Find flights to Kyoto' },
  },
};

/** A POST of `body` as JSON (a string is sent as it is). */
export const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** Fetches `url`; the body parsed as JSON (undefined when empty). */
export async function call(
  url: string,
  init?: RequestInit,
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON the route sent.
): Promise<{ status: number; headers: Response['headers']; body: any }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}
