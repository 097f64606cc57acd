import { refusedMigration } from '@internal/pg-test';
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import {
  migrate,
  NotifyError,
  postgresDecisionLinkLedger,
  postgresSlackMessageStore,
  slackSender,
  useDecisionLink,
} from '../src/index.js';
import { describeOnEachStorage, questionCreated, record, startReceiver } from './support.js';

await describeOnEachStorage("the package's own tables", (s) => {
  it('migrate is idempotent and records its migration in x_notify.__migrations', async () => {
    await migrate(s.target.db);
    await migrate(s.target.db);
    const rows = rowsOf(
      await s.target.db.execute(sql`select count(*)::int as n from x_notify.__migrations`),
    );
    expect(rows).toEqual([{ n: 1 }]);
  });

  it('a migration the server refuses is NotifyError unavailable, with the server’s words', async () => {
    const error = await refusedMigration(s.target.db, migrate, 'x_notify.__migrations');
    expect(NotifyError.hasCode(error, 'unavailable')).toBe(true);
    expect((error as NotifyError).message).toMatch(/migrating @x\/notify failed: .*already exists/);
  });

  it('a decision link is used once; a second use is used_link and changes nothing', async () => {
    await useDecisionLink(s.target.db, 'link-aaaaaaaaaaaaaaaa', 't1');
    const again = await useDecisionLink(s.target.db, 'link-aaaaaaaaaaaaaaaa', 't1').catch(
      (e: unknown) => e,
    );
    expect(NotifyError.hasCode(again, 'used_link')).toBe(true);
    const ledger = postgresDecisionLinkLedger(s.target.db);
    await ledger.use('link-bbbbbbbbbbbbbbbb', 't1');
    await expect(ledger.use('link-bbbbbbbbbbbbbbbb', 't1')).rejects.toMatchObject({
      code: 'used_link',
    });
    const used = rowsOf(
      await s.target.db.execute(sql`select id from x_notify.decision_links order by id`),
    );
    expect(used).toEqual([{ id: 'link-aaaaaaaaaaaaaaaa' }, { id: 'link-bbbbbbbbbbbbbbbb' }]);
  });

  it("a link used in an answer's transaction that rolls back stays unused", async () => {
    const rolledBack = new Error('the answer was refused');
    await expect(
      s.target.db.transaction(async (tx) => {
        await useDecisionLink(tx, 'link-cccccccccccccccc', 't2');
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    await useDecisionLink(s.target.db, 'link-cccccccccccccccc', 't2');
  });

  it("keeps where each question's Slack message is; the last post wins", async () => {
    const messages = postgresSlackMessageStore(s.target.db);
    expect(await messages.find('t1')).toBeUndefined();
    await messages.record('t1', { channel: 'C1', ts: '1.0' });
    await messages.record('t1', { channel: 'C2', ts: '2.0' });
    await messages.record('t2', { channel: 'C1', ts: '3.0' });
    expect(await messages.find('t1')).toEqual({ channel: 'C2', ts: '2.0' });
    expect(await messages.find('t2')).toEqual({ channel: 'C1', ts: '3.0' });
  });

  it('a sender made later (another process) updates the message an earlier one posted', async () => {
    const slack = await startReceiver((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, channel: 'C7', ts: '42.5' }));
    });
    try {
      const target = { apiUrl: `${slack.url}api/`, token: 'xoxb-1', channel: 'C1' };
      const created = questionCreated('s1', 'slack');
      await slackSender({ ...target, messages: postgresSlackMessageStore(s.target.db) })(
        record(created),
      );
      await slackSender({ ...target, messages: postgresSlackMessageStore(s.target.db) })(
        record(created, 'question.cancelled', { answeredBy: 'ana' }),
      );
      expect(slack.requests.map((r) => r.url)).toEqual([
        '/api/chat.postMessage',
        '/api/chat.update',
      ]);
      expect(JSON.parse(slack.requests[1]?.body ?? '{}')).toMatchObject({
        channel: 'C7',
        ts: '42.5',
        text: 'Cancelled by ana',
      });
    } finally {
      await slack.close();
    }
  });
});
