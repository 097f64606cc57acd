// Internal: what the row triggers of `paused_states` do, done by the store's own insert and
// answer statements (migration 0009), which mark their row (`aura.pause_write`) so that those
// triggers skip it.
import { type SQL, sql } from 'drizzle-orm';
import type { ASKUSER_ANSWERED_CHANNEL, ASKUSER_CREATED_CHANNEL } from './channels.js';

/** The `pending_audience` keys of the row `p`: its audience's names and roles. */
export const audienceKeys = sql`unnest(array(select 'name:' || n from unnest(p.audience_names) n)
  || array(select 'role:' || r from unnest(p.audience_roles) r))`;

/**
 * The common table expression `gone` that removes the `pending_audience` rows of the pauses
 * that the common table expression `resolved` returned (its `token` and `has_audience`).
 */
export const audienceGone = sql`gone as (delete from aura.pending_audience a using resolved r
  where r.has_audience and a.token = r.token)`;

/** The condition that notifies `channel` of the row `r`'s token (delivered on commit). */
export function notified(
  channel: typeof ASKUSER_CREATED_CHANNEL | typeof ASKUSER_ANSWERED_CHANNEL,
): SQL {
  return sql`pg_notify(${sql.raw(`'${channel}'`)}, r.token) is not null`;
}
