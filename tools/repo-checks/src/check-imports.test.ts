import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  allowedSiblings,
  checkImports,
  checkMirrors,
  codeOnly,
  importsOf,
} from './check-imports.mjs';

const cli = fileURLToPath(new URL('./check-imports.mjs', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const made: string[] = [];

/** A throwaway monorepo: `{ 'packages/askuser': { manifest, files } }`. */
function monorepo(
  workspaces: Record<string, { manifest: object; files: Record<string, string> }>,
): string {
  const root = mkdtempSync(path.join(tmpdir(), 'check-imports-'));
  made.push(root);
  for (const [dir, { manifest, files }] of Object.entries(workspaces)) {
    mkdirSync(path.join(root, dir, 'src'), { recursive: true });
    writeFileSync(path.join(root, dir, 'package.json'), JSON.stringify(manifest));
    for (const [file, text] of Object.entries(files))
      writeFileSync(path.join(root, dir, file), text);
  }
  return root;
}

const line = (...parts: string[]) => `${parts.join(' ')}\n`;
const importFrom = (what: string, from: string) => line('import', what, 'from', `'${from}';`);

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('check-imports', () => {
  it('passes on this repository', () => {
    expect(checkImports(repoRoot)).toEqual([]);
    expect(checkMirrors(repoRoot)).toEqual([]);
  });

  it('fails when a mirrored file drifts from its twin', () => {
    const root = monorepo({
      'packages/a': { manifest: { name: '@x/wire' }, files: { 'src/x.ts': 'one\n' } },
      'packages/b': { manifest: { name: '@x/askuser' }, files: { 'src/x.ts': 'two\n' } },
    });
    const pairs = [['packages/a/src/x.ts', 'packages/b/src/x.ts']];
    expect(checkMirrors(root, pairs)).toEqual([
      'packages/b/src/x.ts: must stay byte-identical to packages/a/src/x.ts (one implementation in two packages); copy the change over',
    ]);
    writeFileSync(path.join(root, 'packages/b/src/x.ts'), 'one\n');
    expect(checkMirrors(root, pairs)).toEqual([]);
  });

  it('fails CI when @x/askuser imports @x/session', () => {
    const root = monorepo({
      'packages/askuser': {
        manifest: { name: '@x/askuser', dependencies: { '@x/session': 'workspace:^' } },
        files: { 'src/index.ts': importFrom('{ SessionManager }', '@x/session') },
      },
    });
    const run = spawnSync(process.execPath, [cli, '--root', root], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'packages/askuser/src/index.ts:1: @x/askuser imports @x/session, which DESIGN.md does not allow',
    );
  });

  it('follows the table for every package, adapters included', () => {
    expect(allowedSiblings('@x/wire')).toEqual([]);
    expect(allowedSiblings('@x/askuser')).toEqual(['@x/postgres-kit']);
    expect(allowedSiblings('@x/postgres-kit')).toEqual([]);
    expect(allowedSiblings('@x/continuation')).toEqual(['@x/wire']);
    expect(allowedSiblings('@x/session')).toEqual(['@x/wire']);
    expect(allowedSiblings('@x/mcp')).toEqual(['@x/askuser']);
    expect(allowedSiblings('@x/continuation-postgres')).toEqual([
      '@x/continuation',
      '@x/wire',
      '@x/postgres-kit',
    ]);
    expect(allowedSiblings('@x/executive')).toContain('@x/continuation-postgres');
    expect(allowedSiblings('@x/executive')).toContain('@x/session-postgres');
    expect(allowedSiblings('@x/executive')).not.toContain('@x/approval-center');
    expect(allowedSiblings('@x/langgraph')).toEqual([
      '@x/executive',
      ...(allowedSiblings('@x/executive') ?? []),
    ]);
    expect(allowedSiblings('@x/langgraph')).toContain('@x/executive');
    expect(allowedSiblings('@x/langgraph')).toContain('@x/postgres-kit');
    expect(allowedSiblings('@x/langgraph')).not.toContain('@x/approval-center');
    expect(allowedSiblings('runner')).toBe('*');
    expect(allowedSiblings('@x/unknown')).toBeUndefined();
  });

  it('fails on an adapter importing a package other than its core and @x/wire', () => {
    const root = monorepo({
      'packages/continuation-postgres': {
        manifest: { name: '@x/continuation-postgres', dependencies: { '@x/askuser': '*' } },
        files: { 'src/index.ts': importFrom('{ AskUserStore }', '@x/askuser') },
      },
    });
    expect(checkImports(root)).toEqual([
      expect.stringContaining('@x/continuation-postgres imports @x/askuser'),
    ]);
  });

  it('fails on an undeclared third-party import, and on a devDependency in shipped code', () => {
    const root = monorepo({
      'packages/wire': {
        manifest: { name: '@x/wire', devDependencies: { 'fast-check': '*' } },
        files: {
          'src/index.ts': importFrom('{ z }', 'zod') + importFrom('fc', 'fast-check'),
          'src/index.test.ts': importFrom('fc', 'fast-check'),
        },
      },
    });
    const violations = checkImports(root);
    expect(violations).toHaveLength(2);
    expect(violations[0]).toContain('imports "zod"');
    expect(violations[1]).toContain(
      'imports "fast-check", which its dependencies or peerDependencies',
    );
  });

  it('fails on a relative import that leaves the workspace, and on a cycle', () => {
    const root = monorepo({
      'packages/session': {
        manifest: { name: '@x/session' },
        files: {
          'src/a.ts': importFrom('{ b }', './b.js') + line('export const a = 1;'),
          'src/b.ts': importFrom('{ a }', './a.js') + line('export const b = 2;'),
          'src/c.ts': importFrom('{ x }', '../../wire/src/index.js'),
        },
      },
      'packages/wire': {
        manifest: { name: '@x/wire' },
        files: { 'src/index.ts': 'export const x = 1;\n' },
      },
    });
    const violations = checkImports(root);
    expect(violations.some((v) => v.includes('reaches outside packages/session'))).toBe(true);
    expect(
      violations.some((v) => v.includes('import cycle src/a.ts -> src/b.ts -> src/a.ts')),
    ).toBe(true);
  });

  it('ignores imports in comments and template text, and sees type-only and dynamic ones', () => {
    const source = [
      '/** @example',
      importFrom('{ x }', '@x/session'),
      ' */',
      `const text = \`${importFrom('{ y }', '@x/askuser')}\`;`,
      importFrom('type { Z }', './z.js'),
      importFrom('{ type V, v }', './v.js'),
      line('export', 'type', '{ T }', 'from', "'./t.js';"),
      line('export', '*', 'from', "'./w.js';"),
      line("const lazy = await import('./lazy.js');"),
      line("import './side-effect.js';"),
    ].join('\n');
    expect(codeOnly(source).code).not.toContain('@x/session');
    expect(importsOf(source).map((i) => i.specifier)).toEqual([
      './z.js',
      './v.js',
      './t.js',
      './w.js',
      './side-effect.js',
      './lazy.js',
    ]);
  });

  it('fails on a cycle of type-only edges, naming its files', () => {
    const cyclic = (files: Record<string, string>) =>
      checkImports(monorepo({ 'packages/wire': { manifest: { name: '@x/wire' }, files } }));
    expect(
      cyclic({
        'src/contract.ts': importFrom('{ cases }', './cases.js') + line('export type C = 1;'),
        'src/cases.ts': importFrom('type { C }', './contract.js') + line('export const cases = 1;'),
      }),
    ).toEqual(['packages/wire: import cycle src/cases.ts -> src/contract.ts -> src/cases.ts']);
    expect(
      cyclic({
        'src/a.ts': importFrom('{ type B }', './b.js') + line('export type A = 1;'),
        'src/b.ts': line('export', 'type', '{ C }', 'from', "'./c.js';"),
        'src/c.ts': line("export type C = typeof import('./a.js');"),
      }),
    ).toEqual(['packages/wire: import cycle src/a.ts -> src/b.ts -> src/c.ts -> src/a.ts']);
    expect(
      cyclic({
        'src/a.ts': importFrom('type { B }', './b.js') + line('export type A = 1;'),
        'src/b.ts': line('export type B = 2;'),
      }),
    ).toEqual([]);
  });
});
