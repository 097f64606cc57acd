import type { StreamEvent, Todo } from '@x/wire';
import type { pino as Pino } from 'pino';
import { setting, VARIABLES } from '../config/index.js';

/** How the runner talks: for people (colour on a TTY) or one JSON object per line. */
export interface Output {
  readonly json: boolean;
  /** A stream event of a running turn. */
  event(event: StreamEvent): void;
  /** A runner event for scripts (`{"type": ...}`), shown to people as `human`. */
  record(record: { type: string } & Record<string, unknown>, human?: string): void;
  /** A line for people only (progress, hints); silent in JSON mode. */
  note(line: string): void;
  /** An error, always on stderr: a line for people, one JSON object for scripts. */
  error(line: string, details?: Record<string, unknown>): void;
  /** A command line for the person to run next, as this process was started (`prefix`). */
  command(line: string): string;
}

/** `1 message`, `2 messages`: a count with its noun. */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}

// C0 controls but tab and newline, DEL, C1 controls, and the invisible characters that
// reorder or break a line (bidi controls, U+2028/9): printed raw, data could move the cursor,
// clear the screen, retitle the terminal or disguise what a line says.
const UNPRINTABLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` safe to print on a terminal: every control character escaped as `\x1b` or
 * `\u202e` (newlines and tabs kept). Every text-mode printer of the runner goes through it;
 * JSON output needs none (JSON escapes them itself).
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

const codes = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, cyan: 36 } as const;

/** Where output goes: a stream, or anything with its `write`. */
export type Sink = { write(text: string): unknown; isTTY?: boolean };

/**
 * A sink that writes whole lines to `target`, each after `label`, so that lines of runs
 * resumed side by side never mix; `flush` ends a partial last line.
 */
export function labelledLines(label: string, target: Sink): Sink & { flush(): void } {
  let partial = '';
  const shown = printable(label);
  return {
    isTTY: Boolean(target.isTTY),
    write(text: string) {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) target.write(`${shown} ${line}\n`);
      return true;
    },
    flush() {
      if (partial) target.write(`${shown} ${partial}\n`);
      partial = '';
    },
  };
}

/** Creates the output for this process. */
export function createOutput(options: {
  json: boolean;
  /** How hints invoke the runner (e.g. `node apps/runner/dist/cli.js`); default `runner`. */
  prefix?: string;
  /** Options a hint repeats after the command (e.g. `--data DIR`). */
  suffix?: string;
  stdout?: Sink;
  stderr?: Sink;
  /** `--log-format json`: pino, whose lines every output becomes (loaded only then). */
  pino?: typeof Pino | undefined;
  /** The trace id of a run's (or conversation's) latest turn, for the `--log-format json` lines about it (traces on). */
  traceId?:
    | ((about: { runId?: string; conversationId?: string }) => string | undefined)
    | undefined;
}): Output {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const colour = Boolean(stdout.isTTY) && !setting(VARIABLES.NO_COLOR);
  const command = (text: string) =>
    `${options.prefix ?? 'runner'} ${text}${options.suffix ? ` ${options.suffix}` : ''}`;
  if (options.pino) return logOutput(options.pino, stdout, stderr, command, options.traceId);
  return options.json
    ? jsonOutput(stdout, stderr, command)
    : humanOutput(stdout, stderr, colour, command);
}

/** One JSON object a line: events and records on stdout, errors on stderr, no notes. */
function jsonOutput(stdout: Sink, stderr: Sink, command: Output['command']): Output {
  const emit = (value: object) => stdout.write(`${JSON.stringify(value)}\n`);
  return {
    json: true,
    event: emit,
    record: emit,
    note: () => {},
    error: (text, details = {}) =>
      stderr.write(`${JSON.stringify({ type: 'error', message: text, ...details })}\n`),
    command,
  };
}

/**
 * `--log-format json`: every line one pino object (`level`, `time`, `msg`), the event's or
 * record's fields beside (`event` names its type; `runId`, `conversationId`, `token` where it
 * is about one). A streamed reply is one `assistant-text` line per run, when it ends; errors
 * go to stderr.
 */
function logOutput(
  pino: typeof Pino,
  stdout: Sink,
  stderr: Sink,
  command: Output['command'],
  traceId?: (about: { runId?: string; conversationId?: string }) => string | undefined,
): Output {
  const settings = {
    base: { pid: process.pid },
    ...(traceId
      ? {
          mixin: ({ runId, conversationId }: { runId?: unknown; conversationId?: unknown }) => {
            const id = traceId({
              ...(typeof runId === 'string' ? { runId } : {}),
              ...(typeof conversationId === 'string' ? { conversationId } : {}),
            });
            return id ? { traceId: id } : {};
          },
        }
      : {}),
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const log = pino(settings, { write: (line: string) => stdout.write(line) });
  const errors = pino(settings, { write: (line: string) => stderr.write(line) });
  // Each run's streamed text, until something else of it is said.
  const texts = new Map<string, { text: string; fields: Record<string, unknown> }>();
  const flush = (runId?: unknown) => {
    for (const [key, { text, fields }] of texts) {
      if (runId !== undefined && key !== String(runId)) continue;
      log.info({ event: 'assistant-text', ...fields }, text);
      texts.delete(key);
    }
  };
  const info = ({ type, ...fields }: { type: string } & Record<string, unknown>, msg: string) => {
    flush(fields.runId);
    log.info({ event: type, ...fields }, msg.trim());
  };
  return {
    json: true,
    event(event) {
      if (event.type !== 'text-delta') return info(event, event.type);
      const { type: _, text, ...fields } = event as typeof event & Record<string, unknown>;
      const key = String(fields.runId ?? '');
      const seen = texts.get(key);
      texts.set(key, { text: (seen?.text ?? '') + text, fields });
    },
    record: (record, human) => info(record, human ?? record.type),
    note(line) {
      flush();
      log.info(line.trim());
    },
    error(line, details = {}) {
      flush();
      errors.error(details, line.trim());
    },
    command,
  };
}

/** Lines for a person: the streamed reply, the plan, notes dimmed, errors in red on stderr. */
function humanOutput(
  stdout: Sink,
  stderr: Sink,
  colour: boolean,
  command: Output['command'],
): Output {
  const paint = (style: keyof typeof codes, text: string) =>
    colour ? `\x1b[${codes[style]}m${text}\x1b[0m` : text;
  let midLine = false;
  const line = (text: string) => {
    if (midLine) stdout.write('\n');
    midLine = false;
    stdout.write(`${text}\n`);
  };
  const checklist = (todos: Todo[]) =>
    todos
      .map((t) => {
        const box = t.status === 'completed' ? '[x]' : t.status === 'in_progress' ? '[~]' : '[ ]';
        return `  ${paint(t.status === 'completed' ? 'green' : 'dim', box)} ${printable(t.content)}`;
      })
      .join('\n');
  return {
    json: false,
    event(event) {
      switch (event.type) {
        case 'text-delta':
          if (!midLine) stdout.write(paint('bold', 'assistant: '));
          stdout.write(printable(event.text));
          midLine = true;
          break;
        case 'tool-progress':
          line(paint('dim', `  · ${printable(event.message)}`));
          break;
        case 'plan-updated':
          line(`${paint('cyan', 'plan')}\n${checklist(event.todos)}`);
          break;
        case 'interrupt-raised':
          break;
        case 'interrupt-resolved':
          break;
        case 'turn-ended':
          if (event.reason === 'failed') {
            line(paint('red', `turn failed: ${printable(event.error ?? '')}`));
          }
          break;
      }
    },
    record(_record, human) {
      if (human !== undefined) line(printable(human));
    },
    note(text) {
      line(paint('dim', printable(text)));
    },
    error(text) {
      if (midLine) stdout.write('\n');
      midLine = false;
      stderr.write(`${paint('red', 'error:')} ${printable(text)}\n`);
    },
    command,
  };
}

/** Bold and colour helpers for human output that does not go through {@link Output}. */
export function style(enabled: boolean) {
  return (name: keyof typeof codes, text: string) =>
    enabled ? `\x1b[${codes[name]}m${text}\x1b[0m` : text;
}
