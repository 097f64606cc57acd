import { createInterface } from 'node:readline';

/** Reads stdin a line at a time, with a prompt on a terminal; `null` at end of input. */
export interface LineReader {
  next(prompt: string): Promise<string | null>;
  close(): void;
}

/** A line reader over stdin that also works when stdin is a pipe. */
export function createLineReader(
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
): LineReader {
  const terminal = Boolean(input.isTTY);
  const rl = createInterface({ input, terminal, output: terminal ? output : undefined });
  const buffered: string[] = [];
  const waiting: Array<(line: string | null) => void> = [];
  let closed = false;
  rl.on('line', (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else buffered.push(line);
  });
  // On a terminal readline takes Ctrl-C itself: it ends the input, as Ctrl-D does.
  rl.on('SIGINT', () => rl.close());
  rl.on('close', () => {
    closed = true;
    for (const waiter of waiting.splice(0)) waiter(null);
  });
  return {
    next(prompt) {
      if (terminal) output.write(prompt);
      const line = buffered.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (closed) return Promise.resolve(null);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close() {
      rl.close();
    },
  };
}
