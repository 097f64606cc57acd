import { describe, expect, it } from 'vitest';
import { createOutput, labelledLines, printable } from '../src/terminal/output.js';

// The one printer of the runner's text mode: nothing it prints can drive the terminal.

function sinks() {
  const written = { stdout: '', stderr: '' };
  return {
    written,
    stdout: { write: (t: string) => (written.stdout += t) },
    stderr: { write: (t: string) => (written.stderr += t) },
  };
}

const CONTROL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('printable and the text output', () => {
  it('escapes C0, DEL, C1 and the invisible reordering characters; keeps newlines, tabs and other text', () => {
    expect(printable('a\u001b[2Jb\u0007\r\u007f\u009b\u202e\u2066\u2028')).toBe(
      'a\\x1b[2Jb\\x07\\x0d\\x7f\\x9b\\u202e\\u2066\\u2028',
    );
    expect(printable('two\nlines\tand é 日本 ✓')).toBe('two\nlines\tand é 日本 ✓');
  });

  it('every text-mode printer escapes what it prints: stream events, records, notes, errors, run labels', () => {
    const { written, stdout, stderr } = sinks();
    const out = createOutput({ json: false, stdout, stderr });
    const evil = '\u001b]0;pwned\u0007';
    out.event({ type: 'text-delta', text: `hi${evil}` });
    out.event({ type: 'tool-progress', message: evil } as never);
    out.event({ type: 'plan-updated', todos: [{ content: evil, status: 'pending' }] } as never);
    out.event({ type: 'turn-ended', reason: 'failed', error: evil } as never);
    out.record({ type: 'x' }, `? ${evil}`);
    out.note(evil);
    out.error(`no conversation ${evil}`);
    const label = labelledLines(`[c${evil}]`, stdout);
    label.write('line\n');
    expect(written.stdout).not.toMatch(CONTROL);
    expect(written.stderr).not.toMatch(CONTROL);
    expect(written.stdout.split('\\x1b]0;pwned\\x07').length - 1).toBe(7);
    expect(written.stderr).toBe('error: no conversation \\x1b]0;pwned\\x07\n');
  });

  it('--json prints the data as it is', () => {
    const { written, stdout, stderr } = sinks();
    createOutput({ json: true, stdout, stderr }).record({ type: 'pause', question: 'a\u001bb' });
    expect(JSON.parse(written.stdout)).toEqual({ type: 'pause', question: 'a\u001bb' });
  });
});
