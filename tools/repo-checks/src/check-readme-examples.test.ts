import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkReadmeExamples, markedExamples } from './check-readme-examples.mjs';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const fence = '```';

describe('check-readme-examples', () => {
  it('finds only the ts blocks the marker line precedes, with their README line', () => {
    const markdown = [
      '# x',
      `${fence}ts`,
      'not marked',
      fence,
      '<!-- typecheck -->',
      `${fence}ts`,
      'const a = 1;',
      'const b = 2;',
      fence,
      '<!-- typecheck -->',
      `${fence}sh`,
      'not ts',
      fence,
    ].join('\n');
    expect(markedExamples(markdown)).toEqual([{ code: 'const a = 1;\nconst b = 2;', line: 7 }]);
  });

  it('every marked example in this repository compiles', () => {
    expect(checkReadmeExamples(repoRoot)).toEqual([]);
  });

  it('reports a compiler error at its README line', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'readme-examples-'));
    made.push(root);
    const dir = path.join(root, 'packages', 'p');
    mkdirSync(dir, { recursive: true });
    // The repository's own compiler and options, in a throwaway repository.
    symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'));
    writeFileSync(
      path.join(root, 'tsconfig.base.json'),
      JSON.stringify({ extends: path.join(repoRoot, 'tsconfig.base.json') }),
    );
    writeFileSync(path.join(dir, 'package.json'), '{"name":"p","type":"module"}');
    const readme = ['# p', '', '<!-- typecheck -->', `${fence}ts`, 'export const n: number = 1;'];
    readme.push("export const s: number = 'x';", fence);
    writeFileSync(path.join(dir, 'README.md'), readme.join('\n'));
    const problems = checkReadmeExamples(root);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^packages\/p\/README\.md:6: error TS2322/);
  });
});
