import { describe, expect, it } from 'vitest';
import { codeBlocks } from './check-readmes.mjs';

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
