import path from 'node:path';
import { type Env, setting, VARIABLES } from '../config/index.js';

/** Quotes `arg` for a POSIX shell when it needs it. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/**
 * How to run this CLI again from where the person is, so that a printed hint runs as
 * printed: the way this process was started. A root `pnpm runner` (or `pnpm demo`) script
 * → `npx pnpm@V runner`; `pnpm exec runner` → the same `exec` (with `--filter runner` when run
 * in the runner's folder); a `runner` on the PATH → `runner`; else `node path/to/cli.js`,
 * relative to the working folder.
 */
export function invocation(
  env?: Env,
  argv: readonly string[] = process.argv,
  cwd: string = process.cwd(),
): string {
  const pnpm = /^pnpm\/(\S+)/.exec(setting(VARIABLES.npm_config_user_agent, env) ?? '');
  if (pnpm) {
    const via = `npx pnpm@${pnpm[1]}`;
    // The root scripts run from the repository root, where `pnpm runner` works.
    const script = setting(VARIABLES.npm_lifecycle_event, env);
    if (script === 'runner' || script === 'demo') {
      return `${via} runner`;
    }
    if (setting(VARIABLES.npm_command, env) === 'exec') {
      return setting(VARIABLES.PNPM_PACKAGE_NAME, env) === 'runner'
        ? `${via} --filter runner exec runner`
        : `${via} exec runner`;
    }
  }
  const script = argv[1] ?? 'runner';
  if (path.basename(script) === 'runner') return 'runner';
  const relative = path.relative(cwd, script);
  return `node ${shellQuote(relative.length < script.length ? relative : script)}`;
}
