import { describe, expect, it } from 'vitest';
import { dataDirs, finished, runCli, startCli, waitForOutput } from './run-cli.js';
import { exec, serve } from './serve-harness.js';

// RUNNER_DEADLINE: a question nobody answers in time gets its default, once, as the outcome
// expired; the run queue keeps the deadline, so a wake that was stopped before it applies it
// when it starts again after it. A late answer is refused (exit 7, HTTP 410).

const dataDir = dataDirs();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function pendingDeadline(data: string, env: Record<string, string>): Promise<Date> {
  const list = await runCli(['paused-states', 'list', '--data', data, '--json'], { env });
  const deadline = list.events[0]?.deadline as { at: string } | null;
  if (!deadline) throw new Error(`no deadline on the pending question: ${list.stdout}`);
  return new Date(deadline.at);
}

describe('deadlines through wake and serve (embedded default)', { timeout: 300_000 }, () => {
  it('a wake stopped before the deadline and started after it applies it once; a late answer is exit 7', async () => {
    const data = dataDir();
    const env = { RUNNER_DEADLINE: 'ask_user=20s:decline' };
    const token = await exec('dl-restart', { data, env });
    const early = startCli(['wake', '--data', data, '--json'], { env });
    await waitForOutput(early, '"type":"ready"');
    early.kill('SIGTERM');
    const stopped = await finished(early);
    const at = await pendingDeadline(data, env);
    // This test needs the first wake to be gone before the deadline (20 s after exec).
    expect(Date.now(), 'the machine was too slow to stop wake before the deadline').toBeLessThan(
      at.getTime(),
    );
    expect(stopped.events.map((e) => e.type)).toEqual(['ready', 'stop-requested']);
    const runs = await runCli(['runs', '--data', data], { env });
    expect(runs.stdout).toMatch(/waiting .* deadline \S+Z \((\d+ s left|passed)\)/);

    await sleep(at.getTime() - Date.now() + 200);
    // Past the deadline, not applied yet: the answer is refused all the same.
    const late = await runCli(['answer', token, '--accept', 'Lisbon', '--data', data], { env });
    expect(late.code, late.stderr).toBe(7);
    expect(late.stderr).toContain('reached its deadline before the answer came');

    const woke = await runCli(['wake', '--once', '--data', data, '--json'], { env });
    expect(woke.code, woke.stderr).toBe(0);
    const claimed = woke.events.filter((e) => e.type === 'run-claimed');
    expect(claimed).toEqual([expect.objectContaining({ token, action: 'expired' })]);
    const again = await runCli(['wake', '--once', '--data', data, '--json'], { env });
    expect(again.events.filter((e) => e.type === 'run-claimed')).toEqual([]);

    const show = await runCli(['show', 'dl-restart', '--data', data], { env });
    expect(show.stdout).toContain(
      `[result: No answer came before the deadline (${at.toISOString()}); the default (decline) was applied.]`,
    );
    expect(show.stdout).toMatch(/→ expired at \S+: its default decline was applied/);
    expect((await runCli(['answer', token, '--decline', '--data', data], { env })).code).toBe(7);

    const audit = await runCli(['audit', '--data', data, '--json'], { env });
    const mine = audit.events.filter((e) => e.token === token);
    expect(mine.filter((e) => e.kind === 'question-expired')).toHaveLength(1);
    expect(mine.filter((e) => e.kind === 'question-answered')).toHaveLength(0);
    const refused = mine.filter((e) => e.kind === 'answer-refused');
    expect(refused.map((e) => (e.data as { reason: string }).reason)).toEqual([
      'expired',
      'expired',
    ]);
    const verified = await runCli(['audit', 'verify', '--data', data], { env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
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
