import { describe, expect, it } from 'vitest';
import {
  catalogOf,
  codeBlocks,
  fileBlocks,
  installLine,
  unknownErrorNames,
  unnamedImports,
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
