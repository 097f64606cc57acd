import { describe, expect, it } from 'vitest';
import { openStorage } from '../src/storage/index.js';
import { sharedStorage } from './run-cli.js';
import { call, dataDirs, exec, json, run, serve, until } from './serve-harness.js';

// RUNNER_QUORUM: a question needs M distinct approvals of its audience; each is recorded and
// the run waits until the M-th. RUNNER_REMIND / RUNNER_ESCALATE: applied once at their time
// by the wake loop through the run's due time, also when wake is started again.

const newDataDir = dataDirs();
const OPERATORS = ['ada', 'bob', 'cy', 'dee', 'eve'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
// The reminder's commands share one open storage instead of opening PGlite each.
const shared = sharedStorage();

describe('quorum, reminders and escalation (embedded default)', { timeout: 300_000 }, () => {
  it('3 of 5 through serve: the same person twice counts once, answers landing together resolve it once', async () => {
    const data = newDataDir();
    const env = { RUNNER_QUORUM: 'ask_user=3' };
    const token = await exec('quorum', { data, env });
    const storage = await openStorage({ dataDir: data, command: 'the test', log: () => {} });
    const keys = new Map<string, string>();
    try {
      for (const name of OPERATORS) keys.set(name, (await storage.operators().add(name, [])).key);
    } finally {
      await storage.close();
    }
    const served = await serve(['--data', data], env);
    try {
      const api = (p: string) => new URL(p, served.url).toString();
      const answerAs = (name: string, content = 'Lisbon') => {
        const body = json({ action: 'accept', content });
        return call(api(`/api/pauses/${token}/answer`), {
          ...body,
          headers: { ...body.headers, authorization: `Bearer ${keys.get(name)}` },
        });
      };
      const first = await answerAs('ada');
      expect(first.status).toBe(200);
      expect(first.body.recorded).toMatchObject({
        counted: true,
        approvals: ['ada'],
        remaining: 2,
      });
      expect(first.body.recorded.message).toContain('1 of 3 approvals (ada), 2 more needed');
      const twice = await answerAs('ada');
      expect(twice.body.recorded).toMatchObject({
        counted: false,
        approvals: ['ada'],
        remaining: 2,
      });
      // The approvals approve one answer: another one is refused, and counts for nobody.
      const other = await answerAs('bob', 'Porto');
      expect(other.status).toBe(400);
      expect(other.body.error.message).toContain('must accept the same');
      const asAda = { headers: { authorization: `Bearer ${keys.get('ada')}` } };
      const listed = await call(api(`/api/pauses/${token}`), asAda);
      expect(listed.body.pause.quorum).toMatchObject({
        needed: 3,
        approvals: [expect.objectContaining({ operator: 'ada' })],
      });

      const together = await Promise.all(OPERATORS.slice(1).map((name) => answerAs(name)));
      const statuses = together.map((r) => r.status).sort();
      expect(statuses, JSON.stringify(together.map((r) => r.body))).toEqual([200, 200, 409, 409]);
      const resolved = together.filter((r) => r.status === 200 && !r.body.recorded);
      expect(resolved).toHaveLength(1);

      const record = await until(async () => {
        const recent = await call(api('/api/recent'), asAda);
        const mine = recent.body.recent.find((r: { token: string }) => r.token === token);
        return mine?.status === 'resumed' ? mine : undefined;
      }, 'the run to resume');
      expect(record.answer.content).toBe('Lisbon');
      // Every approver of the quorum answer, not only the last one (`answeredBy`).
      const approvers = [
        'ada',
        ...OPERATORS.slice(1).filter((_, i) => together[i]?.status === 200),
      ];
      const names = (q: { approvals: { operator: string }[] }) =>
        q.approvals.map((a) => a.operator).sort();
      expect(names(record.quorum)).toEqual(approvers.sort());
      expect(record.quorum.needed).toBe(3);
      const context = await call(api(`/api/pauses/${token}/context`), asAda);
      const asked = context.body.context.history.find((r: { token: string }) => r.token === token);
      expect(names(asked.quorum)).toEqual(approvers);
    } finally {
      expect(await served.stop()).toBe(0);
    }
    const audit = await run(['audit', '--data', data, '--json'], env);
    const mine = audit.events.filter((e) => e.token === token);
    expect(mine.filter((e) => e.kind === 'approval-recorded')).toHaveLength(3);
    expect(mine.filter((e) => e.kind === 'question-answered')).toHaveLength(1);
  });

  it('a reminder and an escalation are applied once when due, and not again by the next wake', async () => {
    const data = newDataDir();
    // Due 1 and 2 ms after the question: the wake loop applies them by the run's due time
    // whatever the duration, so a few ms of waiting stand in for hours.
    const env = {
      RUNNER_TOKEN: '',
      RUNNER_REMIND: 'ask_user=1ms',
      RUNNER_ESCALATE: 'ask_user=2ms:lead+@ada',
      RUNNER_AUDIENCE: 'ask_user=travel',
      RUNNER_DEADLINE: 'ask_user=1h:decline',
    };
    const cli = (args: string[]) => shared.run(args, { env });
    const started = await cli([
      'exec',
      'Plan a trip',
      '--conversation',
      'reminded',
      '--json',
      '--data',
      data,
    ]);
    const token = started.events.find((e) => e.type === 'run-waiting')?.token;
    expect(token, started.stderr).toBeDefined();
    await sleep(10);
    const woke = await cli(['wake', '--once', '--data', data, '--json']);
    expect(woke.code, woke.stderr).toBe(0);
    expect(woke.events.filter((e) => e.type === 'question-reminded')).toEqual([
      expect.objectContaining({ token }),
    ]);
    expect(woke.events.filter((e) => e.type === 'question-escalated')).toEqual([
      expect.objectContaining({ token, roles: ['lead'], names: ['ada'] }),
    ]);
    const again = await cli(['wake', '--once', '--data', data, '--json']);
    expect(
      again.events.filter((e) => String(e.type).startsWith('question-')),
      again.stdout,
    ).toEqual([]);
    const audit = await cli(['audit', '--data', data, '--json']);
    const kinds = audit.events.filter((e) => e.token === token).map((e) => e.kind);
    expect(kinds).toEqual(['question-created', 'question-reminded', 'question-escalated']);
    // The question still waits, for its widened audience, until its deadline.
    const list = await cli(['paused-states', 'list', '--data', data, '--json']);
    expect(list.events[0]).toMatchObject({
      token,
      audience: { names: ['ada'], roles: ['lead', 'travel'] },
    });
  });
});
