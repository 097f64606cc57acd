import { randomUUID } from 'node:crypto';
import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import { ASKUSER_ANSWERED_CHANNEL, AskUserStore } from '@x/askuser';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';
import { call, json, type Served, serve, until } from './serve-harness.js';

const server = await serverForTests();

// Issue 48: a question no executive run owns (an app's own @x/askuser row, as the askuser
// README's example inserts it) is listed, shown, answered and reported like any other.
describe.skipIf(!server)("an app's own questions in the approval center (PostgreSQL)", () => {
  let database: TestDatabase;
  let sql: postgres.Sql;
  let served: Served;
  const env = () => ({ DATABASE_URL: database.url });
  const api = (p: string) => new URL(p, served.url).toString();
  /** The askuser README's question, with a description on one option. */
  const question = (token: string) => ({
    token,
    conversationId: 'conv-7',
    kind: 'ask_user',
    question: 'Deploy to production now?',
    options: [{ label: 'yes' }, { label: 'no', description: 'Keep the current release' }],
    priority: 1,
    toolCallId: 'call_abc',
    resumeContext: { step: 'deploy' },
  });

  beforeAll(async () => {
    database = await createTestDatabase(server as string, 'x_app_questions');
    const migrated = await runInProcess(['migrate'], { env: env() });
    expect(migrated.code, migrated.stderr).toBe(0);
    sql = postgres(database.url, { max: 2, onnotice: () => {} });
    served = await serve(['--no-wake'], env());
  }, 120_000);
  afterAll(async () => {
    if (served) expect(await served.stop()).toBe(0);
    await sql?.end();
    await database?.drop();
  });

  it('shows its options as the app gave them, and its app hears of the answer', async () => {
    const token = `int-${randomUUID()}`;
    const heard: string[] = [];
    const listener = await sql.listen(ASKUSER_ANSWERED_CHANNEL, (t) => heard.push(t));
    try {
      await new AskUserStore(drizzle({ client: sql })).insert(question(token));
      const { body } = await call(api('/api/pauses'));
      const listed = body.pauses.find((p: { token: string }) => p.token === token);
      expect(listed).toMatchObject({
        question: 'Deploy to production now?',
        options: [
          { label: 'yes', description: null },
          { label: 'no', description: 'Keep the current release' },
        ],
        canAnswer: true,
      });
      const answered = await call(
        api(`/api/pauses/${token}/answer`),
        json({ action: 'accept', content: 'yes' }),
      );
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      await until(() => heard.includes(token), 'the answer to be notified');
      const { body: recent } = await call(api('/api/recent'));
      expect(recent.recent.find((r: { token: string }) => r.token === token)).toMatchObject({
        status: 'answered',
        outcome: null,
        run: null,
        answer: { action: 'accept', content: 'yes' },
      });
      const got = await new AskUserStore(drizzle({ client: sql })).getAnswer(token);
      expect(got?.answer).toEqual({ action: 'accept', content: 'yes' });
    } finally {
      await listener.unlisten();
    }
  });

  it('the CLI lists its options by label and answers one by number', async () => {
    const token = `int-${randomUUID()}`;
    await new AskUserStore(drizzle({ client: sql })).insert(question(token));
    const listed = await runInProcess(['paused-states', 'list'], { env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('options: 1) yes 2) no');
    const answered = await runInProcess(['answer', token, '--option', '2'], { env: env() });
    expect(answered.code, answered.stderr).toBe(0);
    const got = await new AskUserStore(drizzle({ client: sql })).getAnswer(token);
    expect(got?.answer).toEqual({ action: 'accept', content: 'no' });
  });
});
