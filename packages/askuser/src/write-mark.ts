// Internal: how a statement tells the row triggers of its table that it did their work itself.
import { type SQL, sql } from 'drizzle-orm';

/**
 * `value`, having set the transaction-local `setting` to `mark`: written into a row, it is
 * evaluated just before the row is, so that the row's triggers, guarded by `WHEN` on the
 * setting (migrations 0009 and 0010), skip that row and only that row.
 */
export function marked(
  setting: 'aura.pause_write' | 'aura.audit_append',
  mark: SQL,
  value: SQL,
): SQL {
  return sql`(case when set_config(${sql.raw(`'${setting}'`)}, ${mark}, true) is not null then ${value} end)`;
}
