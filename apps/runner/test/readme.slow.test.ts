import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, freePort, serverForTests } from '@internal/pg-test';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, runShell } from './run-cli.js';

// The ```sh run blocks of the README and of its topic pages (docs/*.md), run as a person
// follows them: line by line in one shell, from a fresh folder, `runner` standing for the
// built CLI and `<token>` for the last token printed before it. Each line must exit 0, or the code its comment names (`exit 22`); a
// background line (`&`) must print something before the next one runs.

const PAGES = [
  'README.md',
  ...readdirSync(new URL('../docs/', import.meta.url))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const root = mkdtempSync(path.join(tmpdir(), 'runner-readme-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const server = await serverForTests();

/** The ```sh run blocks of a README, each with the number of its first line. */
function runBlocks(markdown: string): { code: string; line: number }[] {
  return [...markdown.matchAll(/^```sh run\n([\s\S]*?)^```/gm)].map((match) => ({
    code: match[1] as string,
    line: markdown.slice(0, match.index).split('\n').length + 1,
  }));
}

/** The block's commands with the line each starts on; a line ending in `\` goes on. */
function commands(code: string, line: number): { text: string; line: number }[] {
  const found: { text: string; line: number }[] = [];
  let open: { text: string; line: number } | undefined;
  code.split('\n').forEach((text, i) => {
    if (open) open.text = `${open.text.slice(0, -1)} ${text.trim()}`;
    else open = { text, line: line + i };
    if (!open.text.endsWith('\\')) {
      found.push(open);
      open = undefined;
    }
  });
  return found;
}

/** One shell script that runs the block's commands and stops at the first unexpected exit. */
function blockScript(code: string, line: number, page: string): string {
  const uuid = '[0-9a-f]\\{8\\}-[0-9a-f]\\{4\\}-[0-9a-f]\\{4\\}-[0-9a-f]\\{4\\}-[0-9a-f]\\{12\\}';
  const steps = commands(code, line).flatMap(({ text, line: at }) => {
    const command = text.replace(/\s{2,}#.*$/, '').trim();
    if (command === '' || command.startsWith('#')) return [];
    const shell = command.replaceAll('<token>', '"$(grep -o "$UUID" all.out | tail -1)"');
    if (shell.endsWith('&')) {
      return [
        `{ ${shell.slice(0, -1)}\n} >background.out 2>&1 & background=$!`,
        'until [ -s background.out ]; do sleep 0.2; done; cat background.out >>all.out',
      ];
    }
    const expected = /#.*\bexit (\d+)/.exec(text)?.[1] ?? '0';
    const quoted = command.replace(/[\\"$`]/g, '\\$&');
    return [
      `{ ${shell}\n} >last.out 2>&1; code=$?; cat last.out >>all.out`,
      `if [ "$code" != ${expected} ]; then echo "${page} line ${at}: exit $code, not ${expected}: ${quoted}"; cat last.out; stop; exit 1; fi`,
    ];
  });
  return [
    `UUID='${uuid}'`,
    `runner() { node '${CLI}' "$@"; }`,
    // A background runner is a shell running node: both end with the block.
    'background=',
    'stop() { if [ -n "$background" ]; then pkill -P "$background"; kill "$background"; wait; fi; }',
    ...steps,
    'stop',
  ].join('\n');
}

describe('the README and its pages', { timeout: 300_000 }, () => {
  const blocks = PAGES.flatMap((page) =>
    runBlocks(readFileSync(new URL(`../${page}`, import.meta.url), 'utf8')).map((block) => ({
      ...block,
      page,
    })),
  );

  it('has blocks marked to be run', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  for (const block of blocks) {
    it(`runs the block at ${block.page}:${block.line} as written, from a fresh folder`, async (t) => {
      const cwd = mkdtempSync(path.join(root, 'block-'));
      let script = blockScript(block.code, block.line, block.page);
      // What a team's machines are, this test's: its database, folder and local address.
      const team = script.includes('postgres://runner@db.internal/runner');
      if (team && !server) t.skip('no PostgreSQL server');
      const database = team ? await createTestDatabase(server) : undefined;
      try {
        if (database) {
          const port = await freePort();
          script = script
            .replaceAll('postgres://runner@db.internal/runner', database.url)
            .replaceAll('/etc/runner/', `${cwd}/`)
            .replaceAll('--host 0.0.0.0', `--port ${port}`)
            .replaceAll('https://approvals.example.com', `http://127.0.0.1:${port}`);
        }
        const result = await runShell(script, { cwd });
        expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
      } finally {
        await database?.drop();
      }
    });
  }
});
