import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../src/storage/index.js';
import { parsePrometheus, type Sample, sampleValue } from './prometheus.js';
import {
  call,
  dataDirs,
  exec,
  json,
  pendingOf,
  type Served,
  serve,
  until,
} from './serve-harness.js';

const dataDir = dataDirs();

/** GET /metrics, parsed (the text format is checked line by line). */
async function scrape(url: string, init?: RequestInit): Promise<Sample[]> {
  const res = await fetch(url, init);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
  return parsePrometheus(await res.text()).samples;
}

describe('metrics of runner serve on the embedded default', { timeout: 120_000 }, () => {
  let server: Served;
  const api = (route: string) => new URL(route, server.url).href;
  const answer = (token: string, body: object) =>
    call(api(`/api/pauses/${token}/answer`), json(body));
  const start = async (conversation: string) => {
    const started = await call(api('/api/runs'), json({ goal: 'Plan a trip', conversation }));
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    return started.body.result.token as string;
  };
  /** The next question of `conversation` once the hosted wake resumed past `after`. */
  const next = (conversation: string, after: string) =>
    until(
      () => pendingOf(server.url, conversation, [after]),
      `the next question of ${conversation}`,
    );

  beforeAll(async () => {
    server = await serve(['--data', dataDir(), '--metrics-port', '0']);
  });
  afterAll(() => server?.stop());

  it('after a scripted set of actions every counter and gauge has the value they imply', async () => {
    // A: answered through to the end (two questions, an approval); B: stopped; C: cancelled
    // by its answer; D: left waiting. One answer is refused, as answered already.
    const a1 = await start('a');
    await start('b');
    const c1 = await start('c');
    await start('d');
    expect((await answer(a1, { action: 'accept', content: 'Lisbon' })).status).toBe(200);
    const a2 = await next('a', a1);
    expect((await answer(a1, { action: 'accept', content: 'Kyoto' })).status).toBe(409);
    expect((await answer(a2, { action: 'accept', content: '3' })).status).toBe(200);
    const a3 = await next('a', a2);
    expect((await answer(a3, { action: 'accept', content: '' })).status).toBe(200);
    expect((await call(api('/api/conversations/b/stop'), json({}))).status).toBe(200);
    expect((await answer(c1, { action: 'cancel', content: '' })).status).toBe(200);
    await until(async () => {
      const { runs } = (await call(api('/api/runs'))).body as { runs: Array<{ status: string }> };
      return runs.filter((r) => r.status === 'completed' || r.status === 'cancelled').length === 3;
    }, 'a completed, b and c cancelled');

    const samples = await until(async () => {
      const got = await scrape(api('/metrics'));
      // The human waits are read beside the resumed turns: wait until all are in.
      return sampleValue(got, 'runner_human_wait_seconds_count') === 4 && got;
    }, 'the four human waits to be observed');
    const at = (name: string, labels?: Record<string, string>) =>
      sampleValue(samples, name, labels);
    expect({
      completed: at('runner_runs_completed_total'),
      failed: at('runner_runs_failed_total'),
      cancelled: at('runner_runs_cancelled_total'),
      expired: at('runner_runs_expired_total'),
      retries: at('runner_run_retries_total'),
      leasesLost: at('runner_leases_lost_total'),
      refused: at('runner_answers_refused_total', { reason: 'conflict' }),
      refusedAll: at('runner_answers_refused_total'),
      // No channel is set up: each channel's series is there from zero, for increase().
      forbidden: at('runner_answers_refused_total', { reason: 'forbidden' }),
      delivered: at('runner_notifications_delivered_total', { channel: 'webhook' }),
      deadLettered: at('runner_notifications_failed_total', { channel: 'slack' }),
    }).toEqual({
      completed: 1,
      failed: 0,
      cancelled: 2,
      expired: 0,
      retries: 0,
      leasesLost: 0,
      refused: 1,
      refusedAll: 1,
      forbidden: 0,
      delivered: 0,
      deadLettered: 0,
    });
    expect({
      pendingHigh: at('runner_questions_pending', { kind: 'ask_user', priority: 'high' }),
      pending: at('runner_questions_pending'),
      overdue: at('runner_questions_overdue'),
      waiting: at('runner_runs', { status: 'waiting' }),
      completed: at('runner_runs', { status: 'completed' }),
      cancelled: at('runner_runs', { status: 'cancelled' }),
      running: at('runner_runs', { status: 'running' }),
      leases: at('runner_leases_held'),
      // PGlite has no pool.
      pool: at('runner_db_pool_connections_max'),
    }).toEqual({
      pendingHigh: 1,
      pending: 1,
      overdue: 0,
      waiting: 1,
      completed: 1,
      cancelled: 2,
      running: 0,
      leases: 0,
      pool: undefined,
    });
    expect({
      accepted: at('runner_human_wait_seconds_count', { kind: 'ask_user', outcome: 'accept' }),
      approved: at('runner_human_wait_seconds_count', { kind: 'approve', outcome: 'accept' }),
      cancelled: at('runner_human_wait_seconds_count', { outcome: 'cancel' }),
      // Every wait fell in the week's last bucket, and none under a second's bucket is missing.
      inWeek: at('runner_human_wait_seconds_bucket', { le: '604800' }),
      resumes: at('runner_answer_to_resume_seconds_count'),
      // Four execs, then A's resumes: one call, two (the weather tool between), one.
      modelCalls: at('runner_model_call_duration_seconds_count', {
        model: 'scripted:trip',
        outcome: 'ok',
      }),
      runDurations: at('runner_run_duration_seconds_count'),
    }).toEqual({
      accepted: 2,
      approved: 1,
      cancelled: 1,
      inWeek: 4,
      resumes: 3,
      modelCalls: 8,
      runDurations: 2,
    });
  });

  it("the dashboard takes the max of the database's gauges, which every process reports alike", async () => {
    const { types } = parsePrometheus(await (await fetch(api('/metrics'))).text());
    const gauges = [...types].filter(([, type]) => type === 'gauge').map(([name]) => name);
    expect(gauges).toContain('runner_questions_pending');
    const dashboard = readFileSync(
      new URL('../docs/grafana-dashboard.json', import.meta.url),
      'utf8',
    );
    const exprs = [...dashboard.matchAll(/"expr": "([^"]*)"/g)].map(([, expr = '']) => expr);
    for (const gauge of gauges) {
      const reading = exprs.filter((expr) => new RegExp(`\\b${gauge}\\b`).test(expr));
      expect(reading.length, gauge).toBeGreaterThan(0);
      for (const expr of reading)
        expect(expr, gauge).toMatch(new RegExp(`^max(?: by \\([^)]*\\))? ?\\(${gauge}\\)$`));
    }
  });

  it('serves /metrics behind sign-in, and on --metrics-port without it', async () => {
    // Without operators, loopback callers are the local admin (above); a wrong key is refused.
    const res = await fetch(api('/metrics'), { headers: { authorization: 'Bearer nope' } });
    expect(res.status).toBe(401);
    const line = server
      .stdout()
      .split('\n')
      .find((l) => l.includes('"type":"metrics"'));
    const { url } = JSON.parse(line ?? '{}') as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const samples = await scrape(url, { headers: { authorization: 'Bearer nope' } });
    expect(sampleValue(samples, 'runner_runs_completed_total')).toBe(1);
    expect((await fetch(new URL('/api/pauses', url))).status).toBe(404);
  });
});

describe('metrics of runner serve with operators', { timeout: 120_000 }, () => {
  it('are for admins: an operator who is not one gets 403; a viewer refused an answer is counted', async () => {
    const data = dataDir();
    const token = await exec('viewed', { data });
    const storage = await openStorage({ dataDir: data, command: 'the test', log: () => {} });
    const keys: Record<string, string> = {};
    try {
      keys.ada = (await storage.operators().add('ada', [])).key;
      keys.root = (await storage.operators().add('root', ['admin'])).key;
      keys.vic = (await storage.operators().add('vic', ['viewer'])).key;
    } finally {
      await storage.close();
    }
    const served = await serve(['--data', data]);
    try {
      const metrics = new URL('/metrics', served.url).href;
      const as = (name: string) => ({ headers: { authorization: `Bearer ${keys[name]}` } });
      const refused = await call(metrics, as('ada'));
      expect(refused.status).toBe(403);
      expect(JSON.stringify(refused.body)).not.toContain('runner_');
      // With operators, a loopback caller without a key is no admin either.
      expect((await fetch(metrics)).status).toBe(401);
      const answered = await call(
        new URL(`/api/pauses/${token}/answer`, served.url).href,
        json({ action: 'accept', content: 'Lisbon' }, as('vic').headers),
      );
      expect(answered.status).toBe(403);
      const samples = await scrape(metrics, as('root'));
      expect(sampleValue(samples, 'runner_runs_completed_total')).toBe(0);
      expect(sampleValue(samples, 'runner_answers_refused_total', { reason: 'forbidden' })).toBe(1);
    } finally {
      await served.stop();
    }
  });
});
