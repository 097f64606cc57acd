import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { promisedOutput, readmeFakeScript, readmeScript } from './readme.js';
import { printedAsShown, readmeTranscripts } from './transcript.js';

const readme = [
  '# Example',
  '```sh',
  'npx pnpm@12.4.2 build --filter example-x...',
  'cd examples/x',
  'node dist/server.js &                       # → at http://127.0.0.1:PORT/mcp',
  `KEY=sk-... node dist/a.js answer '{"a":1}'   # → waiting for toolu_…`,
  'node dist/a.js answer "Lisbon"              # → (the model\'s answer)',
  '```',
].join('\n');

describe('readmeScript', () => {
  it('reads the build, the cd and each node line with its environment, quotes and promise', () => {
    const script = readmeScript(readme);
    expect(script.build).toBe('npx pnpm@12.4.2 build --filter example-x...');
    expect(script.cd).toBe('examples/x');
    const [server, answer, last] = script.commands;
    expect(server).toMatchObject({ args: ['dist/server.js'], background: true });
    expect(answer).toMatchObject({
      env: { KEY: 'sk-...' },
      args: ['dist/a.js', 'answer', '{"a":1}'],
      background: false,
      expected: { text: 'waiting for toolu_', prefix: true },
    });
    expect(last?.args).toEqual(['dist/a.js', 'answer', 'Lisbon']);
    expect(last?.expected).toBeUndefined();
  });

  it('refuses a line a person could not follow as written', () => {
    expect(() => readmeScript(readme.replace('cd examples/x', 'pushd x'))).toThrow(
      /not a build, cd or node line: pushd x/,
    );
    expect(() => readmeScript('# none')).toThrow(/no ```sh block/);
  });
});

describe('promisedOutput', () => {
  it('is the whole output, or its start when the promise ends with …', () => {
    const [, answer] = readmeScript(readme).commands;
    expect('waiting for toolu_1: {}\n').toMatch(promisedOutput(answer as never));
    expect('still waiting for toolu_1\n').not.toMatch(promisedOutput(answer as never));
    const whole = promisedOutput({
      line: '',
      env: {},
      args: [],
      background: false,
      expected: { text: 'Booked.', prefix: false },
    });
    expect('Booked.\n').toMatch(whole);
    expect('Booked. Twice.\n').not.toMatch(whole);
  });
});

describe('readmeFakeScript', () => {
  /** The script named by a README holding `text`, or the error it throws. */
  function scriptOf(text: string): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'fake-llm-readme-'));
    try {
      writeFileSync(path.join(dir, 'README.md'), text);
      return readmeFakeScript(dir);
    } catch (error) {
      return (error as Error).message;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('is the script the README serves, and an error when it names none or an unknown one', () => {
    expect(scriptOf('node tools/fake-llm/dist/cli.js --script booking   # →')).toBe('booking');
    expect(scriptOf('node tools/fake-llm/dist/cli.js')).toMatch(/has no .*--script NAME/);
    expect(scriptOf('node tools/fake-llm/dist/cli.js --script bookings')).toBe(
      'the README serves "bookings", which is no script',
    );
  });
});

describe('readmeTranscripts', () => {
  const shown = [
    '```console',
    '$ node dist/a.js policy test "policy tests"',
    'pass one',
    'ok: took 12 ms',
    '$ KEY=sk-... node dist/a.js work',
    'nothing to resume',
    '```',
  ].join('\n');

  it('reads each $ node line of a console block with the output shown under it', () => {
    expect(readmeTranscripts(shown)).toEqual([
      {
        line: 'node dist/a.js policy test "policy tests"',
        args: ['dist/a.js', 'policy', 'test', 'policy tests'],
        output: 'pass one\nok: took 12 ms\n',
      },
      {
        line: 'KEY=sk-... node dist/a.js work',
        args: ['dist/a.js', 'work'],
        output: 'nothing to resume\n',
      },
    ]);
  });

  it('refuses output before a command and a command that is not node', () => {
    expect(() => readmeTranscripts('```console\nstray\n```')).toThrow(/output before any \$ line/);
    expect(() => readmeTranscripts('```console\n$ ls\n```')).toThrow(/not a node command: \$ ls/);
  });

  it('compares what was printed with what is shown, durations aside', () => {
    expect(printedAsShown('ok: took 12 ms\n', 'ok: took 3051 ms\n')).toBe(true);
    expect(printedAsShown('pass one\n', 'FAIL one\n')).toBe(false);
    expect(printedAsShown('pass one\n', 'pass one\nextra\n')).toBe(false);
  });
});
