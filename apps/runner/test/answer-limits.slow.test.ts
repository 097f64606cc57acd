import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, fixture, startFakeProvider } from './fixtures/fake-provider.js';
import { dataDirs, runCli } from './run-cli.js';
import { exec, serve } from './serve-harness.js';

// An answer too large for any continuation is refused where it enters, with the limit, and
// nothing is written; a run whose record the store refuses fails with that reason at once,
// never as "database unavailable" nor as workers that went away.

const dataDir = dataDirs();
const FIVE_MB = 'x'.repeat(5 * 1024 * 1024);
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(() => fake.close());

describe('limits where an answer enters', { timeout: 300_000 }, () => {
  it('a 5 MB answer is refused by answer --batch and the API, giving the limit; the question stays open', async () => {
    const data = dataDir();
    const token = await exec('big-1', { data });
    const batch = path.join(data, 'batch.json');
    writeFileSync(batch, JSON.stringify([{ token, action: 'accept', content: FIVE_MB }]));
    const refused = await runCli(['answer', '--batch', batch, '--data', data]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trimEnd().split('\n')).toEqual([
      `error: the answer to ${token} is 5,242,880 characters, over the limit of 16,384 characters for an answer; nothing was changed`,
    ]);
    const server = await serve(['--no-wake', '--data', data]);
    try {
      const response = await fetch(new URL(`/api/pauses/${token}/answer`, server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'accept', content: FIVE_MB }),
      });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({
        error: {
          code: 'payload_too_large',
          message: 'request bodies are limited to 262,144 bytes (256 KiB)',
          limit: 262144,
        },
      });
      // Neither refusal wrote anything: the question is still pending.
      const pending = await fetch(new URL(`/api/pauses/${token}`, server.url));
      expect(pending.status).toBe(200);
      expect(await pending.json()).toMatchObject({ pause: { token } });
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('close', resolve));
    }
  });

  it('a run whose next continuation is over the store limit fails at once with that reason', async () => {
    const data = dataDir();
    const env = { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: `${fake.url}/v1` };
    const cli = (args: string[]) => runCli([...args, '--data', data], { env });
    fake.queue.push({ sse: fixture('openai-ask.sse') });
    const started = await cli(['exec', 'Plan me a trip', '--model', 'openai:gpt-x', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const token = started.events.find((e) => e.type === 'run-waiting')?.token as string;
    expect((await cli(['answer', token, '--accept', 'April'])).code).toBe(0);
    // The resumed turn streams 17 MB of text before it asks again: too much to save.
    const huge = fixture('openai-ask.sse')
      .replace('Kyoto is ', 'x'.repeat(17 * 1024 * 1024))
      .replace('call_Ask2', 'call_Ask3');
    fake.queue.push({ sse: huge });
    const woke = await cli(['wake', '--once']);
    expect(woke.code, woke.stderr.slice(0, 600)).toBe(1);
    expect(woke.stderr).not.toContain('database unavailable');
    expect(woke.stderr.trimEnd().split('\n')[0]?.slice(0, 400)).toMatch(
      /^error: run \S+ \(\S+\) failed after 1 attempt \(0 ended with the worker gone, 1 with an error\): \[@x\/continuation\] suspension is \d+ bytes encoded, over the store's limit of 16777216/,
    );
    const runs = await cli(['runs', '--json']);
    expect(runs.events).toEqual([
      expect.objectContaining({
        type: 'run',
        status: 'failed',
        attempts: 1,
        lastError: expect.stringContaining("over the store's limit of 16777216"),
      }),
    ]);
  });
});
