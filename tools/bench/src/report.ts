import type { Stats } from './measure.js';

/** How a row's ratio is judged. */
export type Goal =
  | { kind: 'at-least'; value: number; label: string }
  | { kind: 'at-most'; value: number; label: string }
  | { kind: 'info'; label: string };

/** One line of the table (and of the JSON). */
export interface Row {
  section: string;
  name: string;
  goal: Goal;
  /** The figure the goal is judged on (floor/subject, subject/floor, ... as the row says). */
  ratio?: number;
  /** What `ratio` means, e.g. "floor/subject" or "MB/s". */
  ratioMeaning: string;
  subject?: Stats;
  floor?: Stats;
  /** Extra figures (bytes, rows, msgs/s, the plan...). */
  extra?: Record<string, unknown>;
  note?: string;
  status?: 'met' | 'missed' | 'info' | 'skipped';
}

/** Sets `status` from `goal` and `ratio`. */
export function judge(row: Row): Row {
  if (row.status === 'skipped') return row;
  if (row.goal.kind === 'info' || row.ratio === undefined || Number.isNaN(row.ratio)) {
    return { ...row, status: row.goal.kind === 'info' ? 'info' : 'missed' };
  }
  const met =
    row.goal.kind === 'at-least' ? row.ratio >= row.goal.value : row.ratio <= row.goal.value;
  return { ...row, status: met ? 'met' : 'missed' };
}

function ms(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '-';
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 1) return `${value.toFixed(2)} ms`;
  return `${(value * 1000).toFixed(1)} µs`;
}

function ratio(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '-';
  if (Math.abs(value) >= 1000) return value.toExponential(2);
  return value >= 100 ? value.toFixed(0) : value.toFixed(2);
}

/** The table as text: one line per row, columns padded. */
export function formatTable(rows: readonly Row[]): string {
  const header = ['row', 'target', 'ratio', 'status', 'median', 'p99', 'spread', 'floor median'];
  const lines = rows.map((r) => [
    `${r.section}: ${r.name}`,
    r.goal.label,
    r.ratio === undefined ? '-' : `${ratio(r.ratio)} (${r.ratioMeaning})`,
    r.status ?? '',
    ms(r.subject?.median),
    ms(r.subject?.p99),
    r.subject ? `±${(r.subject.spread * 100).toFixed(1)}%` : '-',
    ms(r.floor?.median),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}
