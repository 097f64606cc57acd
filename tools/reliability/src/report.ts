/** What one scenario measured. A scenario passes with no loss, no duplicate and no failure. */
export class Tally {
  cases = 0;
  faults = 0;
  losses = 0;
  duplicates = 0;
  readonly failures: string[] = [];
  readonly notes: string[] = [];
  skipped: string | undefined;
  seconds = 0;

  constructor(readonly name: string) {}

  /** A lost record or answer: it was written (or answered) and cannot be found whole. */
  loss(detail: string): void {
    this.losses++;
    this.failures.push(`LOSS: ${detail}`);
  }

  /** Something happened twice that must happen once (two winners, two resumes). */
  duplicate(detail: string): void {
    this.duplicates++;
    this.failures.push(`DUPLICATE: ${detail}`);
  }

  /** Any other broken promise: an untyped error, a partial write, a wrong outcome. */
  fail(detail: string): void {
    this.failures.push(detail);
  }

  /** Fails with `detail` unless `ok`; returns `ok`. */
  check(ok: boolean, detail: () => string): boolean {
    if (!ok) this.fail(detail());
    return ok;
  }

  note(line: string): void {
    this.notes.push(line);
  }

  skip(why: string): void {
    this.skipped = why;
  }

  get passed(): boolean {
    return this.skipped === undefined && this.failures.length === 0;
  }
}

const MAX_SHOWN_FAILURES = 8;

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** The summary table, the notes and failures of each scenario, and the last line. */
export function render(tallies: readonly Tally[]): string {
  const header = ['scenario', 'cases', 'faults', 'losses', 'duplicates', 'seconds', 'result'];
  const rows = tallies.map((t) => [
    t.name,
    String(t.cases),
    String(t.faults),
    String(t.losses),
    String(t.duplicates),
    t.seconds.toFixed(1),
    t.skipped !== undefined ? 'SKIPPED' : t.passed ? 'ok' : 'FAILED',
  ]);
  const total = [
    'total',
    String(tallies.reduce((n, t) => n + t.cases, 0)),
    String(tallies.reduce((n, t) => n + t.faults, 0)),
    String(tallies.reduce((n, t) => n + t.losses, 0)),
    String(tallies.reduce((n, t) => n + t.duplicates, 0)),
    tallies.reduce((n, t) => n + t.seconds, 0).toFixed(1),
    tallies.every((t) => t.passed || t.skipped !== undefined) ? 'ok' : 'FAILED',
  ];
  const widths = header.map((h, i) =>
    Math.max(h.length, ...[...rows, total].map((r) => r[i]!.length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => pad(c, widths[i]!, i > 0 && i < 6)).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i > 0 && i < 6 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  const out = ['', line(header), rule, ...rows.map(line), line(total), ''];
  for (const t of tallies) {
    if (t.skipped !== undefined) out.push(`- ${t.name}: SKIPPED: ${t.skipped}`);
    for (const n of t.notes) out.push(`- ${t.name}: ${n}`);
    for (const f of t.failures.slice(0, MAX_SHOWN_FAILURES)) out.push(`✗ ${t.name}: ${f}`);
    if (t.failures.length > MAX_SHOWN_FAILURES) {
      out.push(`✗ ${t.name}: ... and ${t.failures.length - MAX_SHOWN_FAILURES} more failures`);
    }
  }
  const passed = tallies.filter((t) => t.passed).length;
  const failed = tallies.filter((t) => !t.passed && t.skipped === undefined).length;
  const skipped = tallies.length - passed - failed;
  if (skipped > 0) out.push(`(${skipped} scenario(s) skipped, see above)`);
  out.push(`reliability: ${passed} passed, ${failed} failed`);
  return out.join('\n');
}
