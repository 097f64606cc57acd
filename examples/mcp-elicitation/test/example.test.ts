import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROGRAMS_TEST_TIMEOUT_MS, runProgram } from '@internal/fake-llm';
import { createPgliteDataDir } from '@internal/pg-test';
import { afterAll, beforeAll, expect, it } from 'vitest';

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));
let server: ChildProcess;
let serverOutput = '';
let url = '';
let state: string;

beforeAll(async () => {
  state = mkdtempSync(path.join(tmpdir(), 'example-mcp-'));
  // The data folder as a fresh install would have it, made from the run's template, not initdb.
  await createPgliteDataDir(path.join(state, 'pglite'));
  server = spawn(process.execPath, [dist('server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  url = await new Promise<string>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`the MCP server exited (${code})`)));
    server.stdout?.on('data', (chunk: Buffer) => {
      serverOutput += chunk.toString('utf8');
      const match = /MCP server at (\S+)/.exec(serverOutput);
      if (match?.[1]) resolve(match[1]);
    });
  });
});
afterAll(() => {
  server.kill();
  rmSync(state, { recursive: true, force: true });
});

it(
  'the client process exits while the server waits; a second one answers and gets the tool result',
  async () => {
    const env = { STATE_DIR: state };
    const first = await runProgram(dist('client.js'), ['start', url], env);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(/^the server asks: When, and for how many\? \{"date":/);

    const second = await runProgram(
      dist('client.js'),
      ['answer', '{"date":"2026-07-01","guests":4}'],
      env,
    );
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toBe('Booked for 4 on 2026-07-01.\n');
    // The server's tool ran once: the answer reached the request the first process left open.
    expect(serverOutput.match(/book_table called/g)).toHaveLength(1);
  },
  PROGRAMS_TEST_TIMEOUT_MS,
);
