import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirs } from './run-cli.js';
import { call, json, run, type Served, serve, until } from './serve-harness.js';
import { expectPaired } from './transcript.js';

// Approval-gated tools (scripted:gated: transfer_funds, then send_email) on one embedded serve
// with its hosted wake: accept, edit then accept, decline with a reason, cancel. Each approved
// call runs once with the question's token as its idempotency key; the effects are counted in
// the data folder's database once serve has stopped.

const dataDir = dataDirs();
const asked = {
  to: 'PT50000201231234567890154',
  amount: 1240,
  currency: 'EUR',
  reference: 'invoice 42',
};
const edited = { to: 'PT50000201231234567890154', amount: 1000, currency: 'EUR' };

type Msg = { role: string; content: Array<Record<string, unknown>> };

describe('approval-gated tools through serve and the CLI', { timeout: 300_000 }, () => {
  let data: string;
  let server: Served;
  const api = (p: string) => new URL(p, server.url).toString();
  const runIds = new Map<string, string>();

  beforeAll(async () => {
    data = dataDir();
    server = await serve(['--data', data]);
  });
  afterAll(async () => {
    if (server) await server.stop();
  });

  async function start(conversation: string): Promise<string> {
    const started = await call(
      api('/api/runs'),
      json({ goal: 'Pay invoice 42', conversation, model: 'scripted:gated' }),
    );
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    runIds.set(conversation, started.body.result.runId);
    return started.body.result.token;
  }
  /** The next question of `conversation` after `after`, once its run waits on it. */
  const nextQuestion = (conversation: string, after: string) =>
    until(async () => {
      const { body } = await call(api(`/api/runs/${runIds.get(conversation)}`));
      const token = body.run.interactionId as string;
      return body.run.status === 'waiting' && token !== after && token;
    }, `a new question of ${conversation}`);
  const ended = (conversation: string, status: string) =>
    until(async () => {
      const { body } = await call(api(`/api/runs/${runIds.get(conversation)}`));
      return body.run.status === status;
    }, `${conversation} ${status}`);
  const answer = (token: string, action: string, content = '') =>
    call(api(`/api/pauses/${token}/answer`), json({ action, content }));
  async function transcript(conversation: string): Promise<Msg[]> {
    const shown = await run(['show', conversation, '--data', data, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const record = shown.events.find((e) => e.type === 'run') as unknown as { messages: Msg[] };
    return record.messages;
  }
  const results = (messages: Msg[]) =>
    messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));

  it('accept: the approved calls run and the model reads their results', async () => {
    const transfer = await start('g-accept');
    const { body } = await call(api('/api/pauses'));
    const pause = body.pauses.find((p: { token: string }) => p.token === transfer);
    expect(pause).toMatchObject({
      kind: 'approve',
      gated: { tool: 'transfer_funds', arguments: asked },
    });
    expect(pause.gated.schema).toMatchObject({
      type: 'object',
      required: ['to', 'amount', 'currency'],
      additionalProperties: false,
    });
    expect((await answer(transfer, 'accept')).status).toBe(200);
    const email = await nextQuestion('g-accept', transfer);
    // Text that is not the arguments as JSON is refused, and leaves the question open.
    const refused = await answer(email, 'accept', 'yes please');
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('its arguments as a JSON object');
    expect((await answer(email, 'accept')).status).toBe(200);
    await ended('g-accept', 'completed');
    const messages = await transcript('g-accept');
    expectPaired(messages);
    expect(results(messages).map((r) => r.content)).toEqual([
      `transferred 1240 EUR to ${asked.to} (transfer ${transfer})`,
      `email sent to billing@atlas.example: "Invoice 42 paid" (message ${email})`,
    ]);
  });

  it('edit, then accept: the edited arguments run; the call stays as the model made it', async () => {
    const transfer = await start('g-edit');
    const before = await transcript('g-edit');
    // Arguments that do not fit the tool's schema are refused (exit 2), nothing is answered.
    const bad = await run(['answer', transfer, '--arguments', '{"amount":-5}', '--data', data]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('the edited arguments of transfer_funds do not fit its schema');
    const good = await run([
      'answer',
      transfer,
      '--arguments',
      JSON.stringify(edited),
      '--data',
      data,
    ]);
    expect(good.code, good.stderr).toBe(0);
    const email = await nextQuestion('g-edit', transfer);
    const declined = await run(['answer', email, '--decline', 'wrong address', '--data', data]);
    expect(declined.code, declined.stderr).toBe(0);
    await ended('g-edit', 'completed');
    const messages = await transcript('g-edit');
    expectPaired(messages);
    // The assistant message that made the call is the one saved when it paused, byte for byte.
    expect(JSON.stringify(messages[1])).toBe(JSON.stringify(before[1]));
    const [ran, refusal] = results(messages);
    expect(ran?.content).toBe(
      `The person changed the arguments before approving; transfer_funds ran with ${JSON.stringify(edited)}. Result: transferred 1000 EUR to ${edited.to} (transfer ${transfer})`,
    );
    // The decline is the person's decision, with their reason: not a tool error.
    expect(refusal).toMatchObject({
      content: "The user declined: wrong address (a person's decision: send_email was not run.)",
    });
    expect(refusal?.is_error).toBeUndefined();
    expect(messages.at(-1)?.content).toEqual([
      { type: 'text', text: 'The payment went out, but no confirmation was sent.' },
    ]);

    // The audit log keeps both the arguments the model gave and those the person approved.
    const { body } = await call(api('/api/audit?conversation=g-edit&limit=500'));
    const mine = (
      body.entries as Array<{ kind: string; token: string; data: Record<string, unknown> }>
    ).filter((e) => e.token === transfer);
    expect(mine.find((e) => e.kind === 'question-created')?.data.arguments).toEqual(asked);
    expect(mine.find((e) => e.kind === 'question-answered')?.data).toMatchObject({
      action: 'accept',
      content: JSON.stringify(edited),
    });
  });

  it('cancel ends the run and runs nothing', async () => {
    const transfer = await start('g-cancel');
    expect((await answer(transfer, 'cancel')).status).toBe(200);
    await ended('g-cancel', 'cancelled');
  });

  it('each approval had exactly one effect, with the arguments that ran', async () => {
    expect(await server.stop()).toBe(0);
    const db = new PGlite(path.join(data, 'pglite'));
    try {
      const { rows } = await db.query<{ tool: string; arguments: unknown; invocations: number }>(
        'select tool, arguments, invocations from runner.tool_effects order by created_at, key',
      );
      expect(rows.map((r) => [r.tool, r.invocations])).toEqual([
        ['transfer_funds', 1],
        ['send_email', 1],
        ['transfer_funds', 1],
      ]);
      expect(rows[2]?.arguments).toEqual(edited);
    } finally {
      await db.close();
    }
  });
});
