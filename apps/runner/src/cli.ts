#!/usr/bin/env node
import { readFileSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import type { Command, Context } from './commands/command.js';
import {
  checkEnvironment,
  questionPolicyDiffering,
  questionPolicyOf,
  setting,
  tracesWanted,
  VARIABLES,
} from './config/index.js';
import { FAILURES, usageError } from './errors.js';
import { watching } from './executive/telemetry.js';
import type { HostedCommandRunner } from './serve/api-cli.js';
import type { OpenStorageOptions, Storage } from './storage/index.js';
import type { HostedCommand, Serving } from './storage/via-serve.js';
import { invocation, shellQuote } from './terminal/invocation.js';
import { createLineReader, type LineReader } from './terminal/lines.js';
import { createOutput, type Output } from './terminal/output.js';

// Each command's module loads only when it runs: a process pays for one command's imports
// (and for none of the packages' when it prints help, refuses its usage or goes through serve).
const help = async () => (await import('./commands/help.js')).HELP;
const helpTopics = async () => (await import('./commands/help.js')).HELP_TOPICS;
const commands: Record<string, () => Promise<Command>> = {
  demo: async () => (await import('./commands/demo.js')).demo,
  chat: async () => (await import('./commands/chat.js')).chat,
  exec: async () => (await import('./commands/exec.js')).exec,
  answer: async () => (await import('./commands/answer.js')).answer,
  wake: async () => (await import('./commands/wake.js')).wake,
  stop: async () => (await import('./commands/stop.js')).stop,
  serve: async () => (await import('./commands/serve.js')).serve,
  runs: async () => (await import('./commands/runs.js')).runs,
  show: async () => (await import('./commands/show.js')).show,
  retry: async () => (await import('./commands/retry.js')).retry,
  'paused-states': async () => (await import('./commands/paused-states.js')).pausedStates,
  audit: async () => (await import('./commands/audit.js')).audit,
  operators: async () => (await import('./commands/operators.js')).operators,
  notifications: async () => (await import('./commands/notifications.js')).notifications,
  migrate: async () => (await import('./commands/migrate.js')).migrate,
  policy: async () => (await import('./commands/policy.js')).policy,
};

// Commands that start something new may create the data folder; the others (and chat
// --resume) need it to exist (operators add may create it), so that a mistyped --data is an error, not a new empty store.
const CREATES_DATA = new Set(['exec', 'chat', 'migrate', 'serve']);

// Commands that, on the embedded default, go through the serve that holds the data folder.
const VIA_SERVE = new Set([
  'exec',
  'answer',
  'stop',
  'retry',
  'runs',
  'show',
  'paused-states',
  'chat',
  'audit',
  'operators',
  'notifications',
]);

// Commands that, with a serve holding the folder, are answered here: serve did their work.
const ANSWERED_HERE = new Set(['migrate', 'wake']);

/** Files a command reads, by the option that names them: read by the caller, sent to serve. */
const INPUT_OPTIONS = ['--goal-file', '--batch'];

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

/** Options every command takes that also come before the command; `true` when they take a value. */
const LEADING: Record<string, boolean> = {
  '--json': false,
  '--data': true,
  '--model': true,
  '--log-format': true,
};

/**
 * pino when the lines are to be JSON logs (`--log-format json`, RUNNER_LOG_FORMAT), loaded
 * only then; undefined for text.
 * @throws a usage error for a format that is neither text nor json.
 */
async function logFormatOf(args: readonly string[]) {
  const given = flag(args, '--log-format');
  const format =
    given === undefined
      ? setting(VARIABLES.RUNNER_LOG_FORMAT)
      : VARIABLES.RUNNER_LOG_FORMAT.kind.parse(given, '');
  if (format === undefined) {
    throw usageError(`--log-format takes text or json, not "${given}"`);
  }
  return format === 'json' ? (await import('pino')).pino : undefined;
}

/**
 * The command and its arguments: options every command takes may come first
 * (`runner --json runs`), and are handed to the command after its own arguments.
 */
function commandOf(argv: readonly string[]): { command: string | undefined; given: string[] } {
  const leading: string[] = [];
  let at = 0;
  for (; at < argv.length; at++) {
    const arg = argv[at] as string;
    const name = arg.split('=')[0] as string;
    if (!(name in LEADING)) break;
    leading.push(arg);
    if (LEADING[name] && !arg.includes('=') && at + 1 < argv.length)
      leading.push(argv[++at] as string);
  }
  return { command: argv[at], given: [...argv.slice(at + 1), ...leading] };
}

/** The command `named` is likely a typo of (at most two edits away, or a prefix of), if any. */
function nearestCommand(named: string): string | undefined {
  const distance = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) {
        const substitution = (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
        next.push(Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, substitution));
      }
      row = next;
    }
    return row[b.length] as number;
  };
  const ranked = Object.keys(commands)
    .map((name) => ({ name, edits: name.startsWith(named) ? 1 : distance(named, name) }))
    .filter(({ edits }) => edits <= 2)
    .sort((a, b) => a.edits - b.edits);
  return named.length > 1 ? ranked[0]?.name : undefined;
}

/** This runner's version, from its package.json. */
function version(): string {
  const file = new URL('../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/**
 * Runs the CLI with `argv` (without node and the script); returns the exit code. `open` opens
 * the command's storage in place of openStorage (the tests keep one open across commands).
 */
export async function main(
  argv: string[],
  open?: (options: OpenStorageOptions) => Promise<Storage>,
): Promise<number> {
  const { command, given } = commandOf(argv);
  const args = attachNegativeValues(given);
  const json = args.includes('--json');
  const dataFlag = flag(args, '--data');
  let pino: Awaited<ReturnType<typeof logFormatOf>>;
  try {
    pino = await logFormatOf(args);
  } catch (error) {
    return report(createOutput({ json }), command ?? '', error);
  }
  // Hints repeat how this process was started, and a --data it was given.
  const out = createOutput({
    json,
    pino,
    traceId: (about) => watching.tracer?.traceId(about),
    prefix: invocation(),
    ...(dataFlag === undefined ? {} : { suffix: `--data ${shellQuote(dataFlag)}` }),
  });
  if (command === '--version' || command === '-V') {
    out.record({ type: 'version', version: version() }, `runner ${version()}`);
    return 0;
  }
  // `runner help exec` is `runner exec --help`.
  const topic = command === 'help' ? args.find((arg) => !arg.startsWith('-')) : undefined;
  if (!command || command === '--help' || command === '-h' || (command === 'help' && !topic)) {
    console.log((await help()).main);
    return command ? 0 : FAILURES.usage.exitCode;
  }
  const topicText = topic === undefined ? undefined : (await helpTopics())[topic];
  if (topicText !== undefined) {
    console.log(topicText);
    return 0;
  }
  const named = topic ?? command;
  const run = commands[named];
  if (!run) {
    const near = nearestCommand(named);
    const meant = near === undefined ? '' : `; did you mean "${near}"?`;
    out.error(`unknown command "${named}"${meant}; see ${out.command('--help')}`, {
      failure: 'usage',
      exitCode: FAILURES.usage.exitCode,
    });
    return FAILURES.usage.exitCode;
  }
  if (topic || args.includes('--help') || args.includes('-h')) {
    const text = await help();
    console.log(text[named] ?? text.main);
    return 0;
  }
  if (dataFlag === '') {
    out.error('--data needs a folder; an empty value would be the current folder', {
      failure: 'usage',
      exitCode: FAILURES.usage.exitCode,
    });
    return FAILURES.usage.exitCode;
  }
  try {
    // A bad setting anywhere is refused before the command does anything, here or in serve.
    checkEnvironment();
  } catch (error) {
    return report(out, command, error);
  }
  const dataDir = dataFlag ?? setting(VARIABLES.RUNNER_DATA);
  const modelId = flag(args, '--model') ?? setting(VARIABLES.RUNNER_MODEL);
  if (!setting(VARIABLES.DATABASE_URL) && (VIA_SERVE.has(command) || ANSWERED_HERE.has(command))) {
    const hosted = await viaServe(out, dataDir, {
      argv: [command, ...args],
      modelId,
      prefix: invocation(),
      ...(dataFlag === undefined ? {} : { suffix: `--data ${shellQuote(dataFlag)}` }),
      tty: Boolean(process.stdout.isTTY),
      policy: questionPolicyOf(),
      inputs: {},
    }).catch((error: unknown) => report(out, command, error));
    if (hosted !== undefined) return hosted;
  }
  // Traces only when OTEL_* asks: otherwise nothing of the SDK is loaded.
  const tracing = tracesWanted() ? await startTracing() : undefined;
  const ctx: Context = {
    out,
    dataDir,
    modelId,
    command,
    open: async () =>
      (open ?? (await import('./storage/index.js')).openStorage)({
        dataDir,
        databaseUrl: setting(VARIABLES.DATABASE_URL),
        command,
        create:
          (CREATES_DATA.has(command) && !(command === 'chat' && args.includes('--resume'))) ||
          (command === 'operators' && args[0] === 'add'),
        log: (line) => out.note(line),
        // On stderr: a person whose output goes elsewhere still learns a new store was made.
        created: (line) => (pino ? out.note(line) : json || process.stderr.write(`${line}\n`)),
      }),
    readInput: (file) => (file === '-' ? text(process.stdin) : readFile(file, 'utf8')),
    hostedCommandRunner,
  };
  try {
    return await execute(run, ctx, args);
  } finally {
    await tracing?.shutdown().catch(() => {});
  }
}

/** This process's tracer, for the executive and the logs' trace ids. */
async function startTracing() {
  const started = (await import('./telemetry/tracing.js')).startTracing();
  watching.tracer = started.tracer;
  return started;
}

/** Runs a command; a failure becomes one error line and its exit code. */
async function execute(run: () => Promise<Command>, ctx: Context, args: string[]): Promise<number> {
  try {
    return await (await run())(ctx, args);
  } catch (error) {
    return report(ctx.out, ctx.command, error);
  }
}

/** A command's failure as one error line; returns its exit code. */
async function report(out: Output, command: string, error: unknown): Promise<number> {
  const { failure, exitCode, message } = (await import('./failure.js')).classifyFailure(error);
  // Node's argument parser explains over several lines; its first line says it all.
  const parser = (error as { code?: unknown })?.code?.toString().startsWith('ERR_PARSE_ARGS');
  out.error(
    parser ? `${message.split('\n')[0]} (see ${out.command(`${command} --help`)})` : message,
    { failure, exitCode },
  );
  if (failure === 'failed' && setting(VARIABLES.RUNNER_DEBUG)) console.error(error);
  return exitCode;
}

/**
 * When a live `serve` holds the data folder, sends it `request` and returns the command's
 * exit code (`migrate` is answered here: serve migrated the folder when it opened it);
 * `undefined` when none does, or it could not be reached before anything was sent.
 */
async function viaServe(
  out: Output,
  dataDir: string,
  request: HostedCommand,
): Promise<number | undefined> {
  const { servingHolder, sendToServe } = await import('./storage/via-serve.js');
  const serving = await servingHolder(dataDir);
  if (!serving) return undefined;
  const said = `via serve (pid ${serving.pid})`;
  if (request.argv[0] === 'migrate') {
    out.record(
      { type: 'migrated', where: dataDir, via: 'serve', pid: serving.pid },
      `nothing to migrate: serve (pid ${serving.pid}) holds ${dataDir} and applied the migrations when it opened it`,
    );
    return 0;
  }
  if (request.argv[0] === 'wake') return wakeHeld(out, dataDir, serving);
  request.inputs = await inputsOf(request.argv);
  process.stderr.write(
    out.json ? `${JSON.stringify({ type: 'via-serve', pid: serving.pid })}\n` : `${said}\n`,
  );
  // Chat reads the person's lines here, at this terminal, and sends each when serve asks.
  const lines = request.argv[0] === 'chat' ? lazyLineReader() : undefined;
  const interrupt = () => lines?.close();
  if (lines) process.once('SIGINT', interrupt);
  try {
    return await sendToServe(serving, request, process, lines);
  } catch (error) {
    const { failure, exitCode, message } = (await import('./failure.js')).classifyFailure(error);
    out.error(message, { failure, exitCode });
    return exitCode;
  } finally {
    process.off('SIGINT', interrupt);
    lines?.close();
  }
}

/**
 * A reader of standard input made at the first line asked for: a serve that cannot be
 * reached has read nothing of it, so the command run here instead reads it all.
 */
function lazyLineReader(): LineReader {
  let reader: LineReader | undefined;
  let closed = false;
  return {
    async next(prompt) {
      if (closed) return null;
      reader ??= createLineReader();
      return reader.next(prompt);
    },
    close() {
      closed = true;
      reader?.close();
    },
  };
}

/**
 * `wake` on a folder a serve holds: its hosted loop resumes the answered runs, so there is
 * nothing to do (0); a serve started with `--no-wake` keeps the folder from any wake (4).
 */
function wakeHeld(out: Output, dataDir: string, serving: Serving): number {
  if (serving.wake !== false) {
    out.record(
      { type: 'idle', where: dataDir, via: 'serve', pid: serving.pid },
      `nothing to wake: serve (pid ${serving.pid}) holds ${dataDir} and resumes its answered runs itself`,
    );
    return 0;
  }
  const { exitCode } = FAILURES.unavailable;
  out.error(
    `serve (pid ${serving.pid}) holds ${dataDir} without its wake loop (--no-wake): restart it without --no-wake to resume answered runs, or stop it and run ${out.command('wake')}`,
    { failure: 'unavailable', exitCode },
  );
  return exitCode;
}

/** The files (or standard input) named by {@link INPUT_OPTIONS}, as this machine has them. */
async function inputsOf(argv: readonly string[]): Promise<HostedCommand['inputs']> {
  const inputs: HostedCommand['inputs'] = {};
  for (const option of INPUT_OPTIONS) {
    const file = flag(argv, option);
    if (file === undefined) continue;
    try {
      inputs[file] = {
        text: file === '-' ? await text(process.stdin) : await readFile(file, 'utf8'),
      };
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      inputs[file] = { error: { ...(code === undefined ? {} : { code }), message } };
    }
  }
  return inputs;
}

/**
 * How `serve` runs a command another process sent over the data folder's socket: parsed as
 * `main` parses it, on the storage serve holds (never closed by the command), printing to
 * the caller's sinks, reading the files the caller sent.
 */
function hostedCommandRunner(storage: Storage): HostedCommandRunner {
  const shared: Storage = { ...storage, close: async () => {} };
  return async (request, sinks) => {
    const { command, given } = commandOf(request.argv);
    const args = attachNegativeValues(given);
    const out = createOutput({
      json: args.includes('--json'),
      pino: await logFormatOf(args).catch(() => undefined),
      prefix: request.prefix,
      ...(request.suffix === undefined ? {} : { suffix: request.suffix }),
      ...sinks,
    });
    const load = command && VIA_SERVE.has(command) ? commands[command] : undefined;
    // A chat sent without its input would read serve's own standard input.
    if (!command || !load || (command === 'chat' && !sinks.lines)) {
      out.error(
        `serve does not run "${command}" for other processes${load ? ' without its input lines (an NDJSON body)' : ''}`,
        { failure: 'usage', exitCode: FAILURES.usage.exitCode },
      );
      return FAILURES.usage.exitCode;
    }
    // Its questions would be asked under serve's policy, not the one set where it was typed.
    const differing = command === 'exec' ? questionPolicyDiffering(request.policy ?? {}) : [];
    if (differing.length > 0) {
      out.error(
        `${differing.join(', ')}: not the same here as in serve (pid ${process.pid}), which holds the data folder and would run this exec under its own; nothing was started: give ${differing.length === 1 ? 'it' : 'them'} serve's ${differing.length === 1 ? 'value' : 'values'}, or restart serve with this terminal's`,
        { failure: 'usage', exitCode: FAILURES.usage.exitCode },
      );
      return FAILURES.usage.exitCode;
    }
    const ctx: Context = {
      out,
      dataDir: storage.where,
      modelId: flag(args, '--model') ?? request.modelId,
      command,
      open: async () => shared,
      ...(sinks.lines ? { lines: sinks.lines } : {}),
      readInput: async (file) => {
        const input = request.inputs[file];
        if (input && 'text' in input) return input.text;
        throw Object.assign(new Error(input?.error.message ?? `${file} was not sent`), {
          code: input?.error.code,
        });
      },
    };
    return execute(load, ctx, args);
  };
}

/** Whether this module was started as the binary (`runner`, `node dist/cli.js`), not imported. */
function startedAsBinary(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

// Imported (the tests run commands in their own process through `main`), it runs nothing.
if (startedAsBinary()) {
  // A reader that went away (`runner runs | head`) ends the command quietly, with the status
  // a shell gives a command killed by SIGPIPE (128 + 13), as other command-line tools end.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(128 + 13);
  });
  const exitCode = await main(process.argv.slice(2));
  process.exitCode = exitCode;
  // A finished command must end even if a driver keeps a handle open after close (postgres.js
  // can, after the server restarted under it); the timer does not itself keep the process up.
  setTimeout(() => process.exit(exitCode), 1_000).unref();
}
