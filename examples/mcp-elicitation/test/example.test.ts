import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  PROGRAMS_TEST_TIMEOUT_MS,
  promisedOutput,
  type ReadmeRun,
  runReadme,
} from '@internal/fake-llm';
import { afterAll, expect, it } from 'vitest';

const example = fileURLToPath(new URL('..', import.meta.url));
let readme: ReadmeRun | undefined;
afterAll(() => readme?.close());

it(
  "the README's commands, as written in a fresh copy: the client exits while the server waits; a second one answers and gets the tool result",
  async () => {
    readme = await runReadme(example);
    for (const { command, run } of readme.steps.slice(1)) {
      expect(run, command.line).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout, command.line).toMatch(promisedOutput(command));
    }
    const [server, start, answer] = readme.steps;
    expect(start?.run.stdout).toMatch(/^the server asks: When, and for how many\? \{"date":/);
    expect(answer?.run.stdout).toBe('Booked for 4 on 2026-07-01.\n');
    expect(server?.run.stdout).toMatch(/^MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp\n/);
    // The server's tool ran once: the answer reached the request the first process left open.
    expect(server?.run.stdout.match(/book_table called/g)).toHaveLength(1);

    // A second answer says the question was already answered, and sends nothing.
    const again = await readme.node([
      'dist/client.js',
      'answer',
      '{"date":"2026-07-02","guests":2}',
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^the question was already answered \(accept .*2026-07-01.* at \d{4}-/,
    );
    expect(again.stdout).toBe('');

    // A new booking answered with what the form does not take (or no JSON at all): the one
    // line of why, exit 1, no stack; the question still waits and a right answer books it.
    const url = /MCP server at (\S+)/.exec(server?.run.stdout ?? '')?.[1] ?? '';
    expect((await readme.node(['dist/client.js', 'start', url])).code).toBe(0);
    for (const bad of ['{"date":"2026-07-03","guests":"many"}', 'four']) {
      const refused = await readme.node(['dist/client.js', 'answer', bad]);
      expect(refused.code, bad).toBe(1);
      expect(refused.stderr, bad).toMatch(
        /^the answer was not taken: .+; the question still waits\n$/,
      );
      expect(refused.stderr, bad).not.toContain('    at ');
    }
    const booked = await readme.node([
      'dist/client.js',
      'answer',
      '{"date":"2026-07-03","guests":2}',
    ]);
    expect(booked.stdout).toBe('Booked for 2 on 2026-07-03.\n');

    // The state is in .state/, which git ignores.
    execFileSync('git', ['check-ignore', '-q', path.join(example, '.state', 'mcp-session.json')], {
      cwd: example,
    });
  },
  // The README's three programs, then four more runs of the client.
  2 * PROGRAMS_TEST_TIMEOUT_MS,
);
