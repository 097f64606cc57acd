#!/usr/bin/env node
import { HELP } from './cli-help.js';
import { answer } from './commands/answer.js';
import { chat } from './commands/chat.js';
import type { Command, Context } from './commands/context.js';
import { demo } from './commands/demo.js';
import { exec } from './commands/exec.js';
import { migrate } from './commands/migrate.js';
import { pausedStates } from './commands/paused-states.js';
import { retry } from './commands/retry.js';
import { runs } from './commands/runs.js';
import { serve } from './commands/serve.js';
import { show } from './commands/show.js';
import { stop } from './commands/stop.js';
import { wake } from './commands/wake.js';
import { EXIT, failureOf } from './errors.js';
import { createOutput } from './output.js';
import { openStorage } from './storage.js';

const commands: Record<string, Command> = {
  demo,
  chat,
  exec,
  answer,
  wake,
  stop,
  serve,
  runs,
  show,
  retry,
  'paused-states': pausedStates,
  migrate,
};

/** Runs the CLI with `argv` (without node and the script); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const json = args.includes('--json');
  const out = createOutput({ json });
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(HELP.main);
    return command ? EXIT.ok : EXIT.usage;
  }
  const run = commands[command];
  if (!run) {
    out.error(`unknown command "${command}"; see runner --help`);
    return EXIT.usage;
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP[command] ?? HELP.main);
    return EXIT.ok;
  }
  const dataFlag = args.indexOf('--data');
  const modelFlag = args.indexOf('--model');
  const dataDir =
    (dataFlag >= 0 ? args[dataFlag + 1] : undefined) ?? process.env.RUNNER_DATA ?? '.runner';
  const modelId =
    (modelFlag >= 0 ? args[modelFlag + 1] : undefined) ??
    process.env.RUNNER_MODEL ??
    'scripted:trip';
  const ctx: Context = {
    out,
    dataDir,
    modelId,
    command,
    open: () =>
      openStorage({
        dataDir,
        databaseUrl: process.env.DATABASE_URL || undefined,
        command,
        log: (line) => out.note(line),
      }),
  };
  try {
    return await run(ctx, args);
  } catch (error) {
    const failure = failureOf(error);
    const message = error instanceof Error ? error.message : String(error);
    out.error(failure === 'usage' ? `${message}\n(see runner ${command} --help)` : message);
    if (failure === 'failed' && process.env.RUNNER_DEBUG) console.error(error);
    return EXIT[failure];
  }
}

const exitCode = await main(process.argv.slice(2));
process.exitCode = exitCode;
// A finished command must end even if a driver keeps a handle open after close (postgres.js
// can, after the server restarted under it); the timer does not itself keep the process up.
setTimeout(() => process.exit(exitCode), 1_000).unref();
