import { describe, expect, it } from 'vitest';
import { restartAcrossDeadline } from './deadline-flow.js';
import { dataDirs, runCli } from './run-cli.js';
import { exec, serve } from './serve-harness.js';

// RUNNER_DEADLINE: a question nobody answers in time gets its default, once, as the outcome
// expired; the run queue keeps the deadline, so a wake or a serve that was stopped before it
// applies it when it starts again after it. A late answer is refused (exit 7, HTTP 410).

const dataDir = dataDirs();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

describe('deadlines through wake and serve (embedded default)', { timeout: 300_000 }, () => {
  it('a wake stopped before the deadline and started after it applies it once; a late answer is exit 7', async () => {
    await restartAcrossDeadline({ args: ['--data', dataDir()], env: {} });
  });

  it('a serve stopped before the deadline and started after it applies it once', async () => {
    const data = dataDir();
    const env = { RUNNER_DEADLINE: 'ask_user=30s:decline' };
    const token = await exec('dl-serve-restart', { data, env });
    const early = await serve(['--data', data], env);
    const api = (base: string, p: string) => new URL(p, base).toString();
    const pending = (await (await fetch(api(early.url, '/api/pauses'))).json()) as {
      pauses: Array<{ token: string; deadline: { at: string } | null }>;
    };
    const at = new Date(pending.pauses.find((p) => p.token === token)?.deadline?.at ?? NaN);
    expect(await early.stop()).toBe(0);
    // This test needs the first serve to be gone before the deadline (30 s after exec).
    expect(Date.now(), 'the machine was too slow to stop serve before the deadline').toBeLessThan(
      at.getTime(),
    );
    await sleep(at.getTime() - Date.now() + 200);
    const late = await serve(['--data', data], env);
    try {
      let record: Record<string, unknown> | undefined;
      for (let i = 0; i < 600 && record?.status !== 'expired'; i++) {
        const recent = (await (await fetch(api(late.url, '/api/recent'))).json()) as {
          recent: Array<Record<string, unknown>>;
        };
        record = recent.recent.find((r) => r.token === token);
        if (record?.status !== 'expired') await sleep(100);
      }
      expect(record).toMatchObject({ status: 'expired', answer: { action: 'decline' } });
    } finally {
      expect(await late.stop()).toBe(0);
    }
    const audit = await runCli(['audit', '--data', data, '--json'], { env });
    const mine = audit.events.filter((e) => e.token === token);
    expect(mine.filter((e) => e.kind === 'question-expired')).toHaveLength(1);
    expect(mine.filter((e) => e.kind === 'question-answered')).toHaveLength(0);
  });

  it('serve applies a deadline with its hosted wake, and answers a late answer 410', async () => {
    const data = dataDir();
    const env = { RUNNER_DEADLINE: 'ask_user=1s:accept:Kyoto' };
    const token = await exec('dl-serve', { data, env });
    const server = await serve(['--data', data], env);
    try {
      const api = (p: string) => new URL(p, server.url).toString();
      let record: Record<string, unknown> | undefined;
      for (let i = 0; i < 600 && record?.status !== 'expired'; i++) {
        const recent = (await (await fetch(api('/api/recent'))).json()) as {
          recent: Array<Record<string, unknown>>;
        };
        record = recent.recent.find((r) => r.token === token);
        if (record?.status !== 'expired') await sleep(100);
      }
      expect(record).toMatchObject({
        status: 'expired',
        answer: { action: 'accept', content: 'Kyoto' },
        deadline: { answer: { action: 'accept', content: 'Kyoto' }, msLeft: 0 },
        expiredAt: expect.stringMatching(/^\d{4}-/),
        answeredBy: null,
      });
      const late = await fetch(api(`/api/pauses/${token}/answer`), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'accept', content: 'Lisbon' }),
      });
      expect(late.status).toBe(410);
      expect(((await late.json()) as { error: { code: string } }).error.code).toBe('expired');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
