import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dataDirs, exec, json, run, type Served, serve } from './serve-harness.js';

const dataDir = dataDirs();

describe('runner serve: GET /api/audit (embedded default, no wake)', () => {
  let server: Served | undefined;
  const data = dataDir();
  const tokens: string[] = [];

  beforeAll(async () => {
    for (const c of ['page', 'api']) tokens.push(await exec(`au-${c}`, { data }));
    server = await serve(['--no-wake', '--operator', 'ada', '--data', data]);
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
  });

  const api = (p: string) => new URL(p, server?.url).toString();

  it('records answers through the page and the API with their channel, a refusal too, and serves them in pages', async () => {
    const origin = new URL(server?.url ?? '').origin;
    const [page, direct] = tokens as [string, string];
    const body = { action: 'accept', content: 'Kyoto' };
    expect((await call(api(`/api/pauses/${page}/answer`), json(body, { origin }))).status).toBe(
      200,
    );
    expect((await call(api(`/api/pauses/${direct}/answer`), json(body))).status).toBe(200);
    expect((await call(api(`/api/pauses/${direct}/answer`), json(body))).status).toBe(409);

    const all = await call(api('/api/audit'));
    expect(all.status).toBe(200);
    const entries = all.body.entries as Array<{ kind: string; token: string; data: object }>;
    // Each question's asking decision is signed in the policy chain, naming its token in its data.
    const decisions = entries.filter(
      (e) => (e.data as { event?: string }).event === 'policy-decision',
    );
    expect(decisions.map((e) => e.data)).toEqual([
      expect.objectContaining({ outcome: 'ask', token: page }),
      expect.objectContaining({ outcome: 'ask', token: direct }),
    ]);
    const answers = entries
      .filter((e) => e.kind !== 'question-created' && !decisions.includes(e))
      .map((e) => [e.kind, e.token, e.data]);
    expect(answers).toEqual([
      ['question-answered', page, expect.objectContaining({ by: 'ada', channel: 'page' })],
      ['question-answered', direct, expect.objectContaining({ by: 'ada', channel: 'api' })],
      [
        'answer-refused',
        direct,
        expect.objectContaining({ reason: 'already_answered', channel: 'api' }),
      ],
    ]);
    expect(all.body.next).toBeNull();

    const first = await call(api('/api/audit?conversation=au-api&limit=2'));
    expect(first.body.entries.map((e: { seq: number }) => e.seq)).toEqual([1, 2]);
    const rest = await call(api(`/api/audit?conversation=au-api&limit=2&after=${first.body.next}`));
    expect(rest.body.entries.map((e: { seq: number }) => e.seq)).toEqual([3]);
    expect(rest.body.next).toBeNull();

    const bad = await call(api('/api/audit?since=yesterday'));
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
  });

  it('verifies after the server stops', async () => {
    expect(await server?.stop()).toBe(0);
    server = undefined;
    const verified = await run(['audit', 'verify', '--data', data]);
    expect(verified.code, verified.stderr).toBe(0);
  });
});
