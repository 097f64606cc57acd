import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDataDir } from './run-cli.js';
import { exec, serve } from './serve-harness.js';

// The audit trail: an answer through the approval center records the operator behind
// the token; the CLI shows it.

const data = tempDataDir();
afterAll(() => rmSync(data, { recursive: true, force: true }));

const post = (url: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('who answered, through runner serve', { timeout: 300_000 }, () => {
  it('records --operator with each answer, in /api/recent and in paused-states list --all', async () => {
    const one = await exec('by-one', { data });
    const two = await exec('by-two', { data });
    const three = await exec('by-three', { data });
    const server = await serve(['--no-wake', '--operator', 'ada', '--data', data]);
    try {
      const api = (p: string) => new URL(p, server.url).toString();
      expect((await post(api(`/api/pauses/${one}/answer`), { action: 'decline' })).status).toBe(
        200,
      );
      const batch = await post(api('/api/pauses/answer-batch'), {
        answers: [{ token: two, action: 'accept', content: 'Kyoto' }],
      });
      expect(batch.status).toBe(200);
      // A second answer, alone or in a batch, says who answered first, how and when.
      const again = await post(api(`/api/pauses/${one}/answer`), { action: 'accept' });
      expect(again.status).toBe(409);
      const refused = (await again.json()) as { error: Record<string, unknown> };
      expect(refused.error.message).toMatch(
        new RegExp(`^question ${one} was already answered: decline by ada at \\d{4}-`),
      );
      expect(refused.error.answered).toEqual([
        {
          token: one,
          answer: { action: 'decline', content: '' },
          answeredBy: 'ada',
          answeredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      ]);
      const batchAgain = await post(api('/api/pauses/answer-batch'), {
        answers: [
          { token: two, action: 'decline', content: '' },
          { token: three, action: 'decline', content: '' },
        ],
      });
      expect(batchAgain.status).toBe(409);
      expect(((await batchAgain.json()) as { error: { message: string } }).error.message).toContain(
        `batch not applied, nothing was answered: question ${two} was already answered: accept "Kyoto" by ada at `,
      );
      const recent = (await (await fetch(api('/api/recent'))).json()) as {
        recent: Array<{ token: string; answeredBy: string | null }>;
      };
      const by = Object.fromEntries(recent.recent.map((r) => [r.token, r.answeredBy]));
      expect(by).toEqual({ [one]: 'ada', [two]: 'ada', [three]: null });
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const all = await runCli(['paused-states', 'list', '--all', '--data', data]);
    expect(all.stdout).toContain(
      `${one}  [by-one] high ask_user: Where would you like to go?  → decline by ada`,
    );
    expect(all.stdout).toContain('→ accept "Kyoto" by ada');
  });
});
