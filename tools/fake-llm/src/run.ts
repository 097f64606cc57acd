import { execFile } from 'node:child_process';

/**
 * A test that runs example processes one after another: each starts Node and its SDKs
 * (and PGlite), which on a busy 2-core machine takes seconds, not the usual one.
 */
export const PROGRAMS_TEST_TIMEOUT_MS = 90_000;

/** How a program run ended. */
export interface ProgramRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a built example (`node file ...args`) in its own process with extra environment
 * variables (in `cwd`, else this process's folder), and resolves when it exits, whatever its
 * exit code.
 */
export function runProgram(
  file: string,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
  cwd?: string,
): Promise<ProgramRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [file, ...args],
      { env: { ...process.env, ...env }, timeout: timeoutMs, encoding: 'utf8', cwd },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
