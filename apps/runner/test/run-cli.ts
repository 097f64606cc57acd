import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

/** The built CLI: these tests run the real `runner` binary, not in-process calls. */
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
