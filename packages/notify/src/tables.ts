import { rowsOf, type StoreDatabase, sqlStateOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import type { DecisionLinkLedger } from './decision-link.js';
import { NotifyError } from './errors.js';
import type { SlackMessage, SlackMessageStore } from './slack.js';

// Every statement of the package's own tables (created by `migrate`), by name.

/**
 * Consumes decision link `id` of question `token` in `x_notify.decision_links`: call it with
 * the transaction that records the link's answer, so the link is used exactly when its answer
 * is (a rolled-back answer leaves the link unused).
 * @throws {NotifyError} `used_link` for a link used before (the unique id, SQLSTATE 23505);
 *   any other database failure as the driver threw it, for the transaction's owner.
 * @example
 * await db.transaction(async (tx) => {
 *   await useDecisionLink(tx, claims.id, claims.token);
 *   // ... record the answer with tx
 * });
 */
export async function useDecisionLink(db: StoreDatabase, id: string, token: string): Promise<void> {
  try {
    await db.execute(sql`insert into x_notify.decision_links (id, token) values (${id}, ${token})`);
  } catch (error) {
    if (sqlStateOf(error) !== '23505') throw error;
    throw new NotifyError('used_link', 'this decision link was used already', { cause: error });
  }
}

/** The {@link DecisionLinkLedger} of `x_notify.decision_links` in `db` ({@link useDecisionLink}). */
export function postgresDecisionLinkLedger(db: StoreDatabase): DecisionLinkLedger {
  return { use: (id, token) => useDecisionLink(db, id, token) };
}

async function recordSlackMessage(db: StoreDatabase, token: string, at: SlackMessage) {
  await db.execute(sql`insert into x_notify.slack_messages (token, channel, ts)
    values (${token}, ${at.channel}, ${at.ts})
    on conflict (token) do update set channel = excluded.channel, ts = excluded.ts`);
}

async function slackMessageOf(db: StoreDatabase, token: string) {
  const [row] = rowsOf(
    await db.execute(sql`select channel, ts from x_notify.slack_messages where token = ${token}`),
  );
  return row && { channel: String(row.channel), ts: String(row.ts) };
}

/**
 * The {@link SlackMessageStore} of `x_notify.slack_messages` in `db`: where each question's
 * message was posted, the last post winning.
 *
 * @example
 * const slack = slackSender({ token: 'xoxb-...', channel: 'C0123', messages: postgresSlackMessageStore(db) });
 */
export function postgresSlackMessageStore(db: StoreDatabase): SlackMessageStore {
  return {
    record: (token, at) => recordSlackMessage(db, token, at),
    find: (token) => slackMessageOf(db, token),
  };
}
