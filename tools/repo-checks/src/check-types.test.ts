import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { typeProblems } from './check-types.mjs';

const scratch = mkdtempSync(path.join(tmpdir(), 'check-types-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Packs an ESM package of `files` with npm (its types `types`); returns the tarball's path. */
function packed(name: string, files: Record<string, string>, types = './index.d.ts'): string {
  const dir = path.join(scratch, name);
  mkdirSync(dir, { recursive: true });
  const manifest = {
    name,
    version: '1.0.0',
    type: 'module',
    exports: { '.': { types, default: './index.js' } },
  };
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest));
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  const out = execFileSync('npm', ['pack', '--pack-destination', scratch, '--json'], {
    cwd: dir,
    encoding: 'utf8',
  });
  return path.join(scratch, (JSON.parse(out) as Array<{ filename: string }>)[0]?.filename ?? '');
}

describe('typeProblems', () => {
  it('passes an ESM package whose entry resolves to its types', async () => {
    const good = packed('good', {
      'index.js': 'export const one = 1;\n',
      'index.d.ts': 'export declare const one: number;\n',
    });
    expect(await typeProblems(new Map([['good', good]]))).toEqual([]);
  });

  it('names a package whose types are missing, and one whose types say CommonJS', async () => {
    const missing = packed('missing', { 'index.js': 'export const one = 1;\n' });
    const cjsTypes = packed(
      'cjs-types',
      {
        'index.js': 'export const one = 1;\n',
        'index.d.cts': 'export declare const one: number;\n',
      },
      './index.d.cts',
    );
    const problems = await typeProblems(
      new Map([
        ['missing', missing],
        ['cjs-types', cjsTypes],
      ]),
    );
    expect(problems.some((p) => p.startsWith('missing: '))).toBe(true);
    expect(problems.some((p) => p.startsWith('cjs-types: attw: '))).toBe(true);
  });
});
