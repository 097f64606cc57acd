import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  anchorsOf,
  catalogOf,
  codeBlocks,
  deadLinks,
  fileBlocks,
  installLine,
  linkWorks,
  packedSection,
  repoPageProblems,
  unknownErrorNames,
  unnamedImports,
  webOf,
} from './check-readmes.mjs';

describe('check-readmes', () => {
  it('finds the ts blocks with their kind and first code line, and leaves other languages out', () => {
    const markdown = [
      '# x',
      '```ts',
      'console.log(1);',
      '```',
      '```sh',
      'npm i',
      '```',
      '```ts test',
      "import { it } from 'vitest';",
      '```',
      '```typescript server',
      'await connect();',
      '```',
    ].join('\n');
    expect(codeBlocks(markdown)).toEqual([
      { kind: 'program', code: 'console.log(1);\n', line: 3 },
      { kind: 'test', code: "import { it } from 'vitest';\n", line: 9 },
      { kind: 'server', code: 'await connect();\n', line: 12 },
    ]);
  });
});

describe('installLine', () => {
  it('reads the packages of the first block, dev ones and comments included', () => {
    const markdown = [
      '# @x/a',
      '',
      '```sh',
      'npm install @x/a postgres # a server',
      'npm install -D vitest',
      '```',
      '## Example',
    ].join('\n');
    expect(installLine(markdown)).toEqual({ packages: ['@x/a', 'postgres', 'vitest'] });
  });

  it('refuses a README whose first block is code, or that has its install line only later', () => {
    const code = ['# @x/a', '```ts', "import { a } from '@x/a';", '```'].join('\n');
    expect(installLine(code).problem).toMatch(/does not start with its install line/);
    const late = ['# @x/a', '## Use', '```sh', 'npm install @x/a', '```'].join('\n');
    expect(installLine(late).problem).toMatch(/does not start with its install line/);
  });

  it('refuses versions (the catalog pins them) and lines that are not npm install', () => {
    const pinned = ['# a', '```sh', 'npm install zod@4.6.7', '```'].join('\n');
    expect(installLine(pinned).problem).toMatch(/"zod@4.6.7": name packages only/);
    const other = ['# a', '```sh', 'pnpm add zod', '```'].join('\n');
    expect(installLine(other).problem).toMatch(/is not an `npm install` line/);
  });
});

describe('packedSection', () => {
  const top = [
    '# @x/a',
    '',
    '## Before the packages are published',
    'Pack them, then:',
    '```sh',
    'npm install "$X_PACKED"/x-a.tgz # ours, together',
    '```',
    '## Install',
    '```sh',
    'npm install @x/a zod',
    '```',
    '## Overview',
  ];

  it("reads the first section's one line, and the install block after it", () => {
    const markdown = top.join('\n');
    expect(packedSection(markdown)).toEqual({ line: 'npm install "$X_PACKED"/x-a.tgz' });
    expect(installLine(markdown)).toEqual({ packages: ['@x/a', 'zod'] });
  });

  it('refuses a README that does not start with the section, or whose block has two lines', () => {
    const later = ['# @x/a', '## Install', ...top.slice(2)].join('\n');
    expect(packedSection(later).problem).toMatch(/does not start with its section/);
    const codeFirst = ['# @x/a', '```sh', 'npm install @x/a', '```', ...top.slice(2)].join('\n');
    expect(packedSection(codeFirst).problem).toMatch(/does not start with its section/);
    const two = [...top.slice(0, 6), 'npm install zod', ...top.slice(6)].join('\n');
    expect(packedSection(two).problem).toMatch(/one ```sh block of one `npm install` line/);
  });
});

describe('deadLinks and linkWorks', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'x-readme-links-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (file: string) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), '# page\n');
  };
  for (const file of [
    'packages/a/README.md',
    'packages/a/docs/api/README.md',
    'packages/a/src/a.ts',
    'packages/b/docs/api/README.md',
    'packages/c/README.md',
  ]) {
    write(file);
  }
  const published = new Map([
    ['@x/a', { dir: path.join(root, 'packages/a'), manifest: { files: ['dist', 'docs'] } }],
    ['@x/b', { dir: path.join(root, 'packages/b'), manifest: { files: ['dist', 'docs'] } }],
    ['@x/c', { dir: path.join(root, 'packages/c'), manifest: { files: ['dist'] } }],
  ]);
  const works = linkWorks({
    root,
    web: webOf({ type: 'git', url: 'git+https://example.org/x.git' }),
    from: path.join(root, 'packages/a/README.md'),
    closure: ['@x/a', '@x/b'],
    published,
  });

  it('keeps links to what the package or one installed beside it ships, and into the repository', () => {
    const markdown = [
      '[api](docs/api/README.md#x) [b](../b/docs/api/README.md) [top](#use)',
      '[c](https://example.org/x/blob/main/packages/c/README.md) [npm](https://www.npmjs.com/)',
    ].join('\n');
    expect(deadLinks(markdown, works)).toEqual([]);
  });

  it('names links to what is not shipped, to a package not installed beside it, and to no file', () => {
    const markdown = [
      '[src](src/a.ts) [c](../c/README.md)',
      '[gone](docs/api/gone.md) [repo](https://example.org/x/blob/main/packages/gone.md)',
    ].join('\n');
    expect(deadLinks(markdown, works)).toEqual([
      { target: 'src/a.ts', line: 1 },
      { target: '../c/README.md', line: 1 },
      { target: 'docs/api/gone.md', line: 2 },
      { target: 'https://example.org/x/blob/main/packages/gone.md', line: 2 },
    ]);
  });
});

describe('anchorsOf and repoPageProblems', () => {
  it("makes the forge's anchors of headings, leaving code blocks out", () => {
    const markdown =
      '# Runs, leases and retries\n## Sub-agents (`delegate`)\n```sh\n# not a heading\n```\n<a id="here"></a>';
    expect([...anchorsOf(markdown)]).toEqual([
      'runs-leases-and-retries',
      'sub-agents-delegate',
      'here',
    ]);
  });

  it("names the runner's pages' links that reach no file or no heading", () => {
    const root = mkdtempSync(path.join(tmpdir(), 'x-repo-pages-'));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        writeFileSync(path.join(root, file), text);
      };
      write(
        'apps/runner/README.md',
        '# runner\n[ok](docs/a.md#the-part) [ok](#runner) [bad](docs/a.md#gone) [bad](docs/none.md) [web](https://example.org/x#y)\n',
      );
      write(
        'apps/runner/docs/a.md',
        '# A\n## The part\n[ok](../../../tools/bench/HISTORY.md) [bad](#nowhere)\n',
      );
      write('tools/bench/HISTORY.md', '# Bench history\n');
      expect(repoPageProblems(root)).toEqual([
        'apps/runner/README.md:2: docs/a.md#gone reaches nothing',
        'apps/runner/README.md:2: docs/none.md reaches nothing',
        'apps/runner/docs/a.md:3: #nowhere reaches nothing',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('fileBlocks and catalogOf', () => {
  it('finds the files the tests need, by path', () => {
    const markdown = ['```js file fixtures/store.mjs', 'export default 1;', '```'].join('\n');
    expect(fileBlocks(markdown)).toEqual([
      { file: 'fixtures/store.mjs', code: 'export default 1;\n', line: 2 },
    ]);
  });

  it("reads the workspace catalog's versions, quoted names too", () => {
    const yaml =
      'packages:\n  - packages/*\n\ncatalog:\n  "@types/node": 20.19.43\n  zod: 4.6.7\n\nallowBuilds:\n  esbuild: false\n';
    expect(Object.fromEntries(catalogOf(yaml))).toEqual({
      '@types/node': '20.19.43',
      zod: '4.6.7',
    });
  });
});

describe('unnamedImports', () => {
  it('names the imports a user who ran the install line would not have, with their line', () => {
    const markdown = [
      '# @x/a',
      '```sh',
      'npm install @x/a',
      '```',
      '```ts',
      "import { readFileSync } from 'node:fs';",
      "import { a } from '@x/a/sub';",
      "import postgres from 'postgres';",
      '```',
      '```js file fixtures/x.mjs',
      "import { z } from 'zod';",
      '```',
    ].join('\n');
    expect(unnamedImports(markdown, ['@x/a'])).toEqual([
      { specifier: 'postgres', line: 8 },
      { specifier: 'zod', line: 11 },
    ]);
  });
});

describe('unknownErrorNames', () => {
  it('names the backticked errors nobody exports, with their line, and only those', () => {
    const markdown = [
      '# @x/a',
      'Throws `AError` (`AError.is(err)`), or a `TypeError`.',
      '',
      'An unknown token: `GoneError`. Not code: GoneError.',
    ].join('\n');
    const known = (name: string) => name === 'AError' || name in globalThis;
    expect(unknownErrorNames(markdown, known)).toEqual([{ name: 'GoneError', line: 4 }]);
  });
});
