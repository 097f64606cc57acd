import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runProgram } from './run.js';
import { namedScripts } from './scripts.js';

// The built command, as the examples' READMEs run it.
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGINT');
});

/** Starts the server with `args` and resolves to its URL once it printed it. */
function serve(args: string[]): Promise<string> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`exited (${code}): ${out}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const url = /fake model at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
  });
}

/** One Chat Completions request offering `book_trip` and `ask_user`: the first tool the model calls. */
async function firstCall(url: string, userText: string): Promise<unknown> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer fake' },
    body: JSON.stringify({
      model: 'fake',
      messages: [{ role: 'user', content: userText }],
      tools: ['book_trip', 'ask_user'].map((name) => ({
        type: 'function',
        function: { name, parameters: { type: 'object' } },
      })),
    }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as {
    choices: Array<{
      message: { tool_calls: Array<{ function: { name: string; arguments: string } }> };
    }>;
  };
  const call = body.choices[0]?.message.tool_calls[0]?.function;
  return { name: call?.name, input: JSON.parse(call?.arguments ?? 'null') };
}

describe('fake-llm CLI', () => {
  it('lists every script in --help', async () => {
    const help = await runProgram(cli, ['--help'], {});
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^usage: fake-llm \[--script NAME\]/);
    for (const name of Object.keys(namedScripts))
      expect(help.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
  });

  it('refuses an unknown script or option, naming the scripts', async () => {
    for (const args of [['--script', 'nope'], ['--nope']]) {
      const run = await runProgram(cli, args, {});
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('booking');
    }
  });

  it('serves the trip script by default: the model asks first', async () => {
    const url = await serve([]);
    expect(await firstCall(url, 'Book me a trip to Porto')).toEqual({
      name: 'ask_user',
      input: { question: 'Where would you like to go?' },
    });
  });

  it('serves the script --script names: booking books the city of the first message', async () => {
    const url = await serve(['--script', 'booking']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await firstCall(url, 'Book me a trip to Porto')).toEqual({
      name: 'book_trip',
      input: { city: 'Porto' },
    });
  });
});
