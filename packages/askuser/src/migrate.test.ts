import {
  openServerTarget,
  refusedMigration,
  type SqlTarget,
  serverForTests,
  sqlTargets,
} from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnce, pause, query } from '../test/support.js';
import {
  ASKUSER_ANSWERED_CHANNEL,
  ASKUSER_CREATED_CHANNEL,
  AskUserError,
  AskUserStore,
  MIGRATIONS_SCHEMA,
  MIGRATIONS_TABLE,
  migrate,
} from './index.js';

for (const spec of await sqlTargets()) {
  describe.skipIf(spec.skip)(`migrate and notifications on ${spec.kind}`, () => {
    let target: SqlTarget;
    beforeAll(async () => {
      target = await spec.open();
    });
    afterAll(() => target?.close());

    it('before migrate, a call fails with unavailable carrying the SQLSTATE', async () => {
      const error = await new AskUserStore(target.db).listPendingAll().catch((e) => e);
      expect(AskUserError.hasCode(error, 'unavailable')).toBe(true);
      expect(error.sqlState).toBe('42P01');
      expect(error.message).toContain('run migrate(db)');
      expect(error.cause).toBeDefined();
    });

    it("a migration the server refuses is unavailable, naming the package, the migration and the server's message", async () => {
      await migrate(target.db);
      const error = await refusedMigration(target.db, migrate, 'x_askuser.__migrations');
      expect(AskUserError.hasCode(error, 'unavailable')).toBe(true);
      expect(error).toMatchObject({
        sqlState: '42P06',
        message:
          '[@x/askuser] migrating @x/askuser failed: migration 0000_paused_states (drizzle/0000_paused_states.sql): schema "aura" already exists (SQLSTATE 42P06)',
      });
    });

    it('is idempotent and records its migrations in its own table', async () => {
      await migrate(target.db);
      await migrate(target.db);
      await target.db.transaction((tx) => migrate(tx));
      const applied = await query(
        target.db,
        sql`select count(*)::int as n from ${sql.identifier(MIGRATIONS_SCHEMA)}.${sql.identifier(MIGRATIONS_TABLE)}`,
      );
      expect(applied).toEqual([{ n: 11 }]);
      const shared = await query(
        target.db,
        sql`select count(*)::int as n from information_schema.tables where table_schema = 'drizzle'`,
      );
      expect(shared).toEqual([{ n: 0 }]);
      const columns = await query(
        target.db,
        sql`select column_name as c from information_schema.columns
            where table_schema = 'aura' and table_name = 'paused_states' order by ordinal_position`,
      );
      expect(columns.map((r) => r.c)).toEqual([
        'token',
        'conversation_id',
        'kind',
        'question',
        'options',
        'priority',
        'tool_call_id',
        'resume_context',
        'proxied_from_child_id',
        'proxied_tool_call_id',
        'created_at',
        'resumed_at',
        'resumed_answer',
        'answered_by',
        'audience_names',
        'audience_roles',
        'requester',
        'requester_may_not_answer',
        'deadline_at',
        'deadline_answer',
        'expired_at',
        'remind_at',
        'reminded_at',
        'escalate_at',
        'escalate_names',
        'escalate_roles',
        'escalated_at',
        'quorum',
        'quorum_declines',
        'approvers',
        'decliners',
        'approved_content',
        'has_audience',
      ]);
    });

    it('lets a caller write a pause in its own transaction, committed or rolled back with it', async () => {
      await target.db.execute(sql`create table if not exists side_effects (token text)`);
      await target.db
        .transaction(async (tx) => {
          await new AskUserStore(tx).insert(pause('rolled-back'));
          await tx.execute(sql`insert into side_effects values ('rolled-back')`);
          throw new Error('abort');
        })
        .catch(() => {});
      await target.db.transaction(async (tx) => {
        await new AskUserStore(tx).insert(pause('committed'));
        await tx.execute(sql`insert into side_effects values ('committed')`);
      });
      const store = new AskUserStore(target.db);
      expect((await store.listRecent()).map((r) => r.token)).toEqual(['committed']);
      expect(await query(target.db, sql`select token from side_effects`)).toEqual([
        { token: 'committed' },
      ]);
    });

    it('notifies askuser_created on insert and askuser_answered on resolution, with the token', async () => {
      expect(ASKUSER_CREATED_CHANNEL).toBe('askuser_created');
      expect(ASKUSER_ANSWERED_CHANNEL).toBe('askuser_answered');
      const store = new AskUserStore(target.db);
      const created = await listenOnce(target, ASKUSER_CREATED_CHANNEL, (p) => p === 'n1');
      const answered = await listenOnce(target, ASKUSER_ANSWERED_CHANNEL, () => true);
      try {
        await store.insert(pause('n1'));
        expect(await created.received).toBe('n1');
        await store.insert(pause('n2'));
        await store.markResumed('n2', { action: 'accept', content: 'ok' });
        // The first answered notification is n2's: n1 is still pending.
        expect(await answered.received).toBe('n2');
      } finally {
        await created.stop();
        await answered.stop();
      }
    });

    it('notifies for batch and auto-resolved pauses, never for a rolled-back one', async () => {
      const store = new AskUserStore(target.db);
      const seen: string[] = [];
      const last = await listenOnce(target, ASKUSER_ANSWERED_CHANNEL, (p) => {
        seen.push(p);
        return p === 'z-auto';
      });
      try {
        await store.insert(pause('b-rolled'));
        await store.insert(pause('b-batch'));
        await store.insert(pause('z-auto', { conversationId: 'auto' }));
        await target.db
          .transaction(async (tx) => {
            await new AskUserStore(tx).markResumed('b-rolled', { action: 'accept', content: '' });
            throw new Error('abort');
          })
          .catch(() => {});
        await store.markResumedBatch({ 'b-batch': { action: 'accept', content: '' } });
        await store.autoResolveForConversation('auto');
        await last.received;
        expect(seen).toEqual(['b-batch', 'z-auto']);
      } finally {
        await last.stop();
      }
    });
  });
}

const serverUrl = await serverForTests();

describe.skipIf(serverUrl === undefined)('migrate from several processes at once (server)', () => {
  it('applies each migration once when three connections migrate concurrently', async () => {
    const target = await openServerTarget(serverUrl ?? '');
    const clients = [1, 2, 3].map(() => postgres(target.url ?? '', { max: 1, onnotice: () => {} }));
    try {
      await Promise.all(clients.map((client) => migrate(drizzle({ client }))));
      const applied = await query(
        target.db,
        sql`select count(*)::int as n from x_askuser.__migrations`,
      );
      expect(applied).toEqual([{ n: 11 }]);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
      await target.close();
    }
  });
});
