import type { StreamEvent, Todo } from '@x/wire';

/** How the runner talks: for people (colour on a TTY) or one JSON object per line. */
export interface Output {
  readonly json: boolean;
  /** A stream event of a running turn. */
  event(event: StreamEvent): void;
  /** A runner event for scripts (`{"type": ...}`), shown to people as `human`. */
  record(record: { type: string } & Record<string, unknown>, human?: string): void;
  /** A line for people only (progress, hints); silent in JSON mode. */
  note(line: string): void;
  /** An error line, always on stderr. */
  error(line: string): void;
}

const codes = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, cyan: 36 } as const;

/** Creates the output for this process. */
export function createOutput(options: {
  json: boolean;
  stdout?: NodeJS.WritableStream & { isTTY?: boolean };
  stderr?: NodeJS.WritableStream;
}): Output {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const colour = Boolean(stdout.isTTY) && !process.env.NO_COLOR;
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
        return `  ${paint(t.status === 'completed' ? 'green' : 'dim', box)} ${t.content}`;
      })
      .join('\n');

  if (options.json) {
    const emit = (value: object) => stdout.write(`${JSON.stringify(value)}\n`);
    return {
      json: true,
      event: emit,
      record: emit,
      note: () => {},
      error: (text) => stderr.write(`${text}\n`),
    };
  }
  return {
    json: false,
    event(event) {
      switch (event.type) {
        case 'text-delta':
          if (!midLine) stdout.write(paint('bold', 'assistant: '));
          stdout.write(event.text);
          midLine = true;
          break;
        case 'tool-progress':
          line(paint('dim', `  · ${event.message}`));
          break;
        case 'plan-updated':
          line(`${paint('cyan', 'plan')}\n${checklist(event.todos)}`);
          break;
        case 'interrupt-raised':
          break;
        case 'interrupt-resolved':
          break;
        case 'turn-ended':
          if (event.reason === 'failed') line(paint('red', `turn failed: ${event.error ?? ''}`));
          break;
      }
    },
    record(_record, human) {
      if (human !== undefined) line(human);
    },
    note(text) {
      line(paint('dim', text));
    },
    error(text) {
      if (midLine) stdout.write('\n');
      midLine = false;
      stderr.write(`${paint('red', 'error:')} ${text}\n`);
    },
  };
}

/** Bold and colour helpers for human output that does not go through {@link Output}. */
export function style(enabled: boolean) {
  return (name: keyof typeof codes, text: string) =>
    enabled ? `\x1b[${codes[name]}m${text}\x1b[0m` : text;
}
