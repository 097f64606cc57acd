import type { HostedCommandRunner } from '../serve/api-cli.js';
import type { Storage } from '../storage/index.js';
import type { LineReader } from '../terminal/lines.js';
import type { Output } from '../terminal/output.js';

/** The options every command takes. */
export const globalOptions = {
  data: { type: 'string' },
  model: { type: 'string' },
  json: { type: 'boolean' },
  'log-format': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** What a command gets from the CLI. */
export interface Context {
  out: Output;
  dataDir: string;
  modelId: string;
  command: string;
  /** Opens the storage (embedded default or DATABASE_URL), migrated. */
  open(): Promise<Storage>;
  /** The text of a file the command reads (`-`: standard input), as the caller's machine has it. */
  readInput(file: string): Promise<string>;
  /** The lines an interactive command reads (default standard input; through serve, the caller's). */
  lines?: LineReader;
  /** How `serve` runs the commands other processes send it, on the storage it holds. */
  hostedCommandRunner?: (storage: Storage) => HostedCommandRunner;
}

/** A command: parses its own arguments, returns the exit code. */
export type Command = (ctx: Context, args: string[]) => Promise<number>;

/** Runs `fn` with an open storage, closing it afterwards. */
export async function withStorage<T>(
  ctx: Context,
  fn: (storage: Storage) => Promise<T>,
): Promise<T> {
  const storage = await ctx.open();
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}
