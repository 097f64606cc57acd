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
import { invocation, shellQuote } from './invocation.js';
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

// Commands that start something new may create the data folder; the others (and chat
// --resume) need it to exist, so that a mistyped --data is an error, not a new empty store.
const CREATES_DATA = new Set(['exec', 'chat', 'migrate', 'serve']);

/** The value of `--name VALUE` or `--name=VALUE`, if given. */
function flag(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at >= 0) return args[at + 1];
  return args.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
}

// `--limit -5` would read as an unknown option "-5": joined as `--limit=-5`, the command
// checks the number and says what it takes.
function attachNegativeValues(args: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (/^--[\w-]+$/.test(arg) && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}

/** Runs the CLI with `argv` (without node and the script); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...given] = argv;
  const args = attachNegativeValues(given);
  const json = args.includes('--json');
  const dataFlag = flag(args, '--data');
  // Hints repeat how this process was started, and a --data it was given.
  const out = createOutput({
    json,
    prefix: invocation(),
    ...(dataFlag === undefined ? {} : { suffix: `--data ${shellQuote(dataFlag)}` }),
  });
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(HELP.main);
    return command ? EXIT.ok : EXIT.usage;
  }
  const run = commands[command];
  if (!run) {
    out.error(`unknown command "${command}"; see ${out.command('--help')}`, {
      failure: 'usage',
      exitCode: EXIT.usage,
    });
    return EXIT.usage;
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP[command] ?? HELP.main);
    return EXIT.ok;
  }
  if (dataFlag === '') {
    out.error('--data needs a folder; an empty value would be the current folder', {
      failure: 'usage',
      exitCode: EXIT.usage,
    });
    return EXIT.usage;
  }
  const dataDir = dataFlag ?? (process.env.RUNNER_DATA || '.runner');
  const modelId = flag(args, '--model') ?? process.env.RUNNER_MODEL ?? 'scripted:trip';
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
        create: CREATES_DATA.has(command) && !(command === 'chat' && args.includes('--resume')),
        log: (line) => out.note(line),
        // On stderr: a person whose output goes elsewhere still learns a new store was made.
        created: (line) => json || process.stderr.write(`${line}\n`),
      }),
  };
  try {
    return await run(ctx, args);
  } catch (error) {
    const failure = failureOf(error);
    // A package's "[@x/...]" origin helps a library's caller; at the command line it is noise.
    const message = (error instanceof Error ? error.message : String(error)).replace(
      /^\[@x\/[\w-]+\] /,
      '',
    );
    // Node's argument parser explains over several lines; its first line says it all.
    const parser = (error as { code?: unknown })?.code?.toString().startsWith('ERR_PARSE_ARGS');
    out.error(
      parser ? `${message.split('\n')[0]} (see ${out.command(`${command} --help`)})` : message,
      { failure, exitCode: EXIT[failure] },
    );
    if (failure === 'failed' && process.env.RUNNER_DEBUG) console.error(error);
    return EXIT[failure];
  }
}

const exitCode = await main(process.argv.slice(2));
process.exitCode = exitCode;
// A finished command must end even if a driver keeps a handle open after close (postgres.js
// can, after the server restarted under it); the timer does not itself keep the process up.
setTimeout(() => process.exit(exitCode), 1_000).unref();
