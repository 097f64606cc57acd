import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokenLinks, differingFiles, entryPointsOf, pagesOf } from './api-docs.mjs';

/** A scratch folder holding `files` (relative path → contents). */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'api-docs-test-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('entryPointsOf', () => {
  it('maps each subpath export to the source its types are built from, named by its specifier', () => {
    const dir = folder({ 'src/index.ts': '', 'src/testing/index.ts': '', 'src/child.js': '' });
    const entries = entryPointsOf(dir, {
      name: '@x/demo',
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './testing': { types: './dist/testing/index.d.ts', default: './dist/testing/index.js' },
        './child': { types: './dist/child.d.ts', default: './dist/child.js' },
        './package.json': './package.json',
      },
    });
    expect(entries).toEqual([
      { specifier: '@x/demo', source: path.join(dir, 'src/index.ts') },
      { specifier: '@x/demo/testing', source: path.join(dir, 'src/testing/index.ts') },
      { specifier: '@x/demo/child', source: path.join(dir, 'src/child.js') },
    ]);
  });

  it('refuses an export with no source under src/', () => {
    const dir = folder({});
    const manifest = { name: '@x/demo', exports: { '.': { types: './dist/index.d.ts' } } };
    expect(() => entryPointsOf(dir, manifest)).toThrow(/exports\["\."\] has no source under src\//);
  });
});

describe('pagesOf', () => {
  it('gives one entry point the index page and several a page each, flat and without the scope', () => {
    expect([...pagesOf([{ specifier: '@x/wire' }])]).toEqual([['@x/wire', 'README.md']]);
    expect([
      ...pagesOf([{ specifier: '@x/session' }, { specifier: '@x/session/testing' }]),
    ]).toEqual([
      ['@x/session', 'session.md'],
      ['@x/session/testing', 'session.testing.md'],
    ]);
  });
});

describe('differingFiles', () => {
  it('names files missing on either side and files whose contents differ', () => {
    const committed = folder({ 'a.md': 'same', 'b.md': 'old', 'gone.md': 'x' });
    const generated = folder({ 'a.md': 'same', 'b.md': 'new', 'added.md': 'y' });
    expect(differingFiles(committed, generated)).toEqual(['added.md', 'b.md', 'gone.md']);
    expect(differingFiles(committed, committed)).toEqual([]);
  });
});

describe('brokenLinks', () => {
  it('names links to a missing page or anchor, and skips web links and those not asked for', () => {
    const dir = folder({
      'a.md':
        '<a id="here"></a>\n[ok](#here) [ok](b.md#there) [bad](#nowhere) [bad](c.md) [bad](b.md#gone) [web](https://example.com/x#y)',
      'b.md': '<a id="there"></a>',
    });
    const files = [path.join(dir, 'a.md'), path.join(dir, 'b.md')];
    expect(brokenLinks(files).map((line) => line.split(': ')[1])).toEqual([
      'broken link #nowhere',
      'broken link c.md',
      'broken link b.md#gone',
    ]);
    expect(brokenLinks(files, (target) => target.startsWith('b.md'))).toHaveLength(1);
  });
});
