import { type ChildProcess, fork, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The built runner CLI. */
export const RUNNER_CLI = require.resolve('runner/dist/cli.js');

const live = new Set<ChildProcess>();

/** Kills every child still running (on exit, and after a scenario). */
export function killAll(): void {
  for (const child of live) child.kill('SIGKILL');
}
process.once('exit', killAll);

/** Forks one of this package's built child scripts (`dist/children/NAME.js`) with IPC. */
export function forkChild(name: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const script = fileURLToPath(new URL(`./children/${name}.js`, import.meta.url));
  const child = fork(script, args, {
    execArgv: [],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** The next IPC message of `child`; rejects if it exits first. */
export function nextMessage<T>(child: ChildProcess, timeoutMs = 60_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`child ${child.pid} sent nothing in ${timeoutMs} ms`));
    }, timeoutMs);
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`child ${child.pid} exited (${code ?? signal}) before answering`));
    };
    const onMessage = (m: unknown) => {
      cleanup();
      resolve(m as T);
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('message', onMessage);
    };
    child.once('exit', onExit);
    child.once('message', onMessage);
  });
}

/** Resolves when the child has exited. */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** One JSON line event of the runner CLI. */
export type CliEvent = { type: string } & Record<string, unknown>;

/** A running runner CLI, its output so far, and its JSON events as they arrive. */
export interface RunnerProcess {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  onEvent(listener: (event: CliEvent) => void): void;
  done: Promise<number | null>;
}

/** Starts `node NODE_ARGS runner/dist/cli.js ARGS` with `env` added to this process's. */
export function startRunner(
  args: string[],
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
): RunnerProcess {
  const child = spawn(process.execPath, [...nodeArgs, RUNNER_CLI, ...args], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const listeners: Array<(event: CliEvent) => void> = [];
  const proc: RunnerProcess = {
    child,
    stdout: '',
    stderr: '',
    onEvent: (listener) => listeners.push(listener),
    done: new Promise((resolve) => child.once('close', (code) => resolve(code))),
  };
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    proc.stdout += text;
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      let event: CliEvent;
      try {
        event = JSON.parse(line) as CliEvent;
      } catch {
        continue;
      }
      for (const listener of listeners) listener(event);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    proc.stderr += chunk.toString();
  });
  return proc;
}

/** Runs the runner CLI to completion. */
export async function runRunner(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = startRunner(args, env);
  const code = await proc.done;
  return { code, stdout: proc.stdout, stderr: proc.stderr };
}

/** Resolves with the first event `match` accepts (and when it came), or undefined after `ms` or when the process exits. */
export function nextEvent(
  proc: RunnerProcess,
  match: (event: CliEvent) => boolean,
  ms: number,
): Promise<{ event: CliEvent; at: number } | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    proc.onEvent((event) => {
      if (!match(event)) return;
      clearTimeout(timer);
      resolve({ event, at: performance.now() });
    });
    void proc.done.then(() => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
