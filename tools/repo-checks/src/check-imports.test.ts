import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  allowedSiblings,
  checkImports,
  checkLayers,
  checkMirrors,
  codeOnly,
  importsOf,
  RUNNER_LAYERS,
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
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, dir, file)), { recursive: true });
      writeFileSync(path.join(root, dir, file), text);
    }
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
    expect(checkLayers(repoRoot)).toEqual([]);
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
    expect(allowedSiblings('@x/notify')).toEqual(['@x/askuser', '@x/postgres-kit']);
    expect(allowedSiblings('@x/policy')).toEqual([]);
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
    // Every framework adapter has the same rule.
    expect(allowedSiblings('@x/openai-agents')).toEqual(allowedSiblings('@x/langgraph'));
    expect(allowedSiblings('@x/ai-sdk')).toEqual(allowedSiblings('@x/langgraph'));
    expect(allowedSiblings('@x/approval-center')).toContain('@x/askuser');
    expect(allowedSiblings('@x/approval-center')).not.toContain('@x/session');
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

  it('fails on a runner import against the layer order, naming the file, its line and both layers', () => {
    const runner = (extra: Record<string, string> = {}) =>
      monorepo({
        'apps/runner': {
          manifest: { name: 'runner' },
          files: {
            'src/cli.ts': importFrom('{ run }', './commands/run.js'),
            'src/commands/run.ts':
              importFrom('{ db }', '../storage/db.js') + line('export const run = 1;'),
            'src/storage/db.ts': line('export const db = 1;'),
            'src/errors.ts': line('export const e = 1;'),
            ...extra,
          },
        },
      });
    // The order with no allowances: the runner's own name files this tree does not have.
    const strict = { ...RUNNER_LAYERS, allowed: [] };
    const clean = runner();
    expect(checkLayers(clean, strict)).toEqual([]);
    // The planted import: storage (low) reaches up to commands.
    const planted = runner({
      'src/storage/db.ts':
        line('export const db = 1;') + importFrom('{ run }', '../commands/run.js'),
    });
    const violation =
      "apps/runner/src/storage/db.ts:2: imports commands/run.ts, against the runner's layers: storage/ (layer 7: storage/) may not import commands/ (layer 2: commands/), which is above it";
    expect(checkLayers(planted, strict)).toEqual([violation]);
    const run = spawnSync(process.execPath, [cli, '--root', planted], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(violation);
    // An allowance names one file to one file: it lets that import through, not another.
    const order = { ...RUNNER_LAYERS, allowed: ['storage/db.ts -> commands/run.ts'] };
    expect(checkLayers(planted, order)).toEqual([]);
    const another = runner({
      'src/storage/db.ts':
        line('export const db = 1;') + importFrom('{ run }', '../commands/run.js'),
      'src/storage/more.ts': importFrom('type { run }', '../commands/run.js'),
    });
    expect(checkLayers(another, order)).toEqual([
      expect.stringContaining('apps/runner/src/storage/more.ts:1: imports commands/run.ts'),
    ]);
    // An allowance no import uses any more fails, so that it is deleted when its move lands.
    expect(checkLayers(clean, order)).toEqual([
      'apps/runner/src: the allowance "storage/db.ts -> commands/run.ts" in RUNNER_LAYERS matches no import any more; delete it',
    ]);
    // A new folder belongs to no layer until it is placed in the order.
    expect(checkLayers(runner({ 'src/extra/x.ts': line('export const x = 1;') }), strict)).toEqual([
      expect.stringContaining('apps/runner/src/extra/x.ts: extra/ is in none of the runner'),
    ]);
  });

  it("the runner's docs/layout.md lists RUNNER_LAYERS in their order and names every file of src", () => {
    const page = readFileSync(path.join(repoRoot, 'apps/runner/docs/layout.md'), 'utf8');
    const block = page.split('```\n')[1] ?? '';
    const entries = block
      .trimEnd()
      .split(/\n(?=\d)/)
      .map((entry) => /^(\d+)\s+(\S+)\s+([\s\S]*)$/.exec(entry));
    expect(entries.map((m) => [Number(m?.[1]), m?.[2]])).toEqual(
      RUNNER_LAYERS.layers.flatMap((layer, at) => layer.map((unit) => [at + 1, unit])),
    );
    const src = path.join(repoRoot, RUNNER_LAYERS.src);
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    );
    for (const file of files) {
      const [head, ...rest] = file.split(path.sep);
      if (rest.length === 0) continue;
      const text = entries.find((m) => m?.[2] === `${head}/`)?.[3] ?? '';
      const stem = path.basename(file, '.ts');
      expect(text, file).toMatch(new RegExp(`(^|[\\s(,;:])${stem}(\\.ts)?([\\s),;:]|$)`));
    }
  });

  it('fails on a server file importing from the page folder web/, type-only ones included', () => {
    const root = monorepo({
      'apps/runner': {
        manifest: { name: 'runner' },
        files: {
          'src/api.ts': line("import type { PauseView } from '../web/src/types.ts';"),
          'src/ok.ts': line('export const ok = 1;'),
        },
      },
    });
    mkdirSync(path.join(root, 'apps/runner/web/src'), { recursive: true });
    writeFileSync(
      path.join(root, 'apps/runner/web/src/types.ts'),
      'export interface PauseView { token: string }\n',
    );
    writeFileSync(
      path.join(root, 'apps/runner/web/src/page.ts'),
      line("import type { PauseView } from './types.ts';"),
    );
    expect(checkImports(root)).toEqual([
      expect.stringContaining(
        'apps/runner/src/api.ts:1: "../web/src/types.ts" reaches into the page\'s folder web/',
      ),
    ]);
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
