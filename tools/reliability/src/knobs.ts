/**
 * The suite's size. The full run (`pnpm test:reliability`, and `pnpm test:full`, which CI runs)
 * is the default; `--quick` is a smaller run for a quick look. An environment variable set by
 * hand wins over both.
 */
export const quick = process.argv.includes('--quick');

/** `process.env[name]` when set, else the full or the quick size. */
export function knob(name: string, full: number, quickSize: number): number {
  const set = process.env[name];
  return set ? Number(set) : quick ? quickSize : full;
}
