import { words } from './readme.js';

/** One command of a README's ```console block and the output shown under it. */
export interface ShownRun {
  /** The command line as written after `$ `. */
  line: string;
  /** What follows `node`: the program and its arguments, unquoted (`NAME=value` before it dropped). */
  args: string[];
  /** The lines shown under it, up to the next `$ ` line or the block's end, each ending in `\n`. */
  output: string;
}

/**
 * The `$ node …` commands of a README's ```console blocks with the output shown under each, so
 * that a test can run them and compare what they print with what the README claims
 * ({@link printedAsShown}). A `$` line that is not a `node` command is refused.
 */
export function readmeTranscripts(markdown: string): ShownRun[] {
  const runs: ShownRun[] = [];
  for (const block of markdown.matchAll(/^```console\n([\s\S]*?)^```/gm)) {
    let current: ShownRun | undefined;
    for (const raw of (block[1] as string).split('\n').slice(0, -1)) {
      if (!raw.startsWith('$ ')) {
        if (!current) throw new Error(`output before any $ line in a console block: ${raw}`);
        current.output += `${raw}\n`;
        continue;
      }
      const line = raw.slice(2).trim();
      const parts = words(line);
      while (parts[0] !== undefined && /^[A-Z_][A-Z0-9_]*=/.test(parts[0])) parts.shift();
      if (parts.shift() !== 'node') throw new Error(`not a node command: ${raw}`);
      current = { line, args: parts, output: '' };
      runs.push(current);
    }
  }
  return runs;
}

// Durations differ from run to run: `took 12 ms` is shown as printed once, compared as any number.
const duration = /\b\d+ ms\b/g;

/** Whether a command printed what a README shows under it, durations (`12 ms`) aside. */
export function printedAsShown(shown: string, printed: string): boolean {
  return shown.replace(duration, 'N ms') === printed.replace(duration, 'N ms');
}
