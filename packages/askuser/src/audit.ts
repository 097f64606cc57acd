import { rowsOf, runPrepared } from '@x/postgres-kit';
import { type SQL, sql } from 'drizzle-orm';
import {
  appendEntries,
  conversationChain,
  GLOBAL_CHAIN,
  headOf,
  inTransaction,
  keyBytes,
  lockHead,
} from './audit-chain.js';
import type { AskUserDatabase } from './database.js';
import { AskUserError, wrapDatabaseError } from './errors.js';

/**
 * The kinds of audit entries:
 * - `question-created`, `question-answered`, `answer-refused`, `question-cancelled`,
 *   `question-expired`, `question-reminded`, `question-escalated`, `approval-recorded` (one
 *   person's answer towards a quorum), `question-purged`: written by {@link AskUserStore} (with an audit key) in the same
 *   transaction as the write they record, in the conversation's chain;
 * - `app-event`: the application's own events ({@link appendAuditEvent});
 * - `chain-purged`: old entries of a chain were removed ({@link purgeAuditOlderThan});
 * - `chains-sealed`: the heads of changed chains, in the global chain ({@link sealAudit}).
 */
export type AuditKind =
  | 'question-created'
  | 'question-answered'
  | 'answer-refused'
  | 'question-cancelled'
  | 'question-expired'
  | 'question-reminded'
  | 'question-escalated'
  | 'approval-recorded'
  | 'question-purged'
  | 'app-event'
  | 'chain-purged'
  | 'chains-sealed';

/** An HMAC-SHA256 key, kept outside the database: bytes, or a string taken as UTF-8 (at least 16 bytes). */
export type AuditKey = string | Uint8Array;

/** One entry of the audit log, as {@link exportAudit} reads it. */
export interface AuditEntry {
  /** Global insertion order (a bigint, as decimal text): the cursor of {@link ExportAuditOptions.after}. */
  id: string;
  /** `conversation:<id>`, an app chain, or `global`. */
  chain: string;
  /** Position in its chain, from 1. */
  seq: number;
  kind: AuditKind;
  at: Date;
  /** The pause the entry is about, or `null`. */
  token: string | null;
  data: unknown;
  /** The hash of the entry before it in its chain (64 zeros for the first). */
  prev: string;
  /** SHA-256 (hex) of this entry's fields and `prev`. */
  hash: string;
  /** HMAC-SHA256 (hex) of `hash` under the audit key. */
  sig: string;
}

/** The last entry of a chain: anchor its `hash` elsewhere to detect a rewritten log. */
export interface AuditHead {
  chain: string;
  seq: number;
  hash: string;
}

/** Columns of an entry as text, `at` as `Date.toISOString()` writes it (what was hashed). */
export const entryColumns = sql`e.id::text as id, e.chain, e.seq::text as seq, e.kind,
  to_char(e.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, e.token, e.body,
  e.prev, e.hash, e.sig`;

/** An entry row read with {@link entryColumns}. */
export function toEntry(row: Record<string, unknown>): AuditEntry {
  return {
    id: String(row.id),
    chain: String(row.chain),
    seq: Number(row.seq),
    kind: String(row.kind) as AuditKind,
    at: new Date(String(row.at)),
    token: row.token === null || row.token === undefined ? null : String(row.token),
    data: JSON.parse(String(row.body)),
    prev: String(row.prev),
    hash: String(row.hash),
    sig: String(row.sig),
  };
}

/** Options of {@link appendAuditEvent}. */
export interface AppendAuditEventOptions {
  key: AuditKey;
  /** The chain to append to; default `app`. `global` and `conversation:*` are the package's. */
  chain?: string;
  /** The pause the event is about, if any. */
  token?: string;
}

/**
 * Appends the application's own event (`app-event`, e.g. an operator added or revoked) to
 * an app chain, in `db`'s transaction when it is one: pass the transaction that makes the
 * change, so the entry commits with it. A list of events is appended in its order, in one
 * statement.
 * @throws {AskUserError} `invalid_argument` for a short key or a reserved chain, `unavailable`.
 * @example
 * await db.transaction(async (tx) => {
 *   await tx.execute(sql`insert into operators ...`);
 *   await appendAuditEvent(tx, { event: 'operator-added', name: 'ada' }, { key });
 * });
 */
export async function appendAuditEvent(
  db: AskUserDatabase,
  data: Record<string, unknown> | readonly Record<string, unknown>[],
  options: AppendAuditEventOptions,
): Promise<void> {
  const key = keyBytes(options.key);
  const chain = options.chain ?? 'app';
  if (!chain || chain === GLOBAL_CHAIN || chain.startsWith(conversationChain(''))) {
    throw new AskUserError(
      'invalid_argument',
      `audit chain ${JSON.stringify(chain)} is reserved: use "app" or a name of your own`,
    );
  }
  try {
    await inTransaction(db, (tx) =>
      appendEntries(
        tx,
        key,
        (Array.isArray(data) ? data : [data]).map((event: Record<string, unknown>) => ({
          chain,
          kind: 'app-event',
          token: options.token ?? null,
          data: event,
        })),
      ),
    );
  } catch (error) {
    throw wrapDatabaseError(error, 'appendAuditEvent');
  }
}

/**
 * The head of a chain (default: the global chain, which {@link sealAudit} advances), or
 * `undefined` when it has no entry yet.
 */
export async function auditHead(
  db: AskUserDatabase,
  chain: string = GLOBAL_CHAIN,
): Promise<AuditHead | undefined> {
  try {
    const [row] = rowsOf(
      await db.execute(
        sql`select chain, seq::text as seq, hash from aura.audit_heads where chain = ${chain} and seq > 0`,
      ),
    );
    return row === undefined
      ? undefined
      : { chain: String(row.chain), seq: Number(row.seq), hash: String(row.hash) };
  } catch (error) {
    throw wrapDatabaseError(error, 'auditHead');
  }
}

/**
 * Seals the heads of the chains that changed since the last seal into one `chains-sealed`
 * entry of the global chain (at most `limit` chains a call, default 10,000), and returns
 * how many it sealed. A wake loop calls it now and then; appends never wait for it, and it
 * waits for none of them. Once sealed, removing an entry of a chain at or before its sealed
 * head is found by {@link verifyAudit} even if the chain's later entries are removed too.
 */
export async function sealAudit(
  db: AskUserDatabase,
  options: { key: AuditKey; limit?: number },
): Promise<number> {
  const key = keyBytes(options.key);
  const limit = Math.max(1, Math.floor(options.limit ?? 10_000));
  try {
    return await db.transaction(async (tx) => {
      // One sealer at a time: the global head's row lock.
      const [head] = await runPrepared(tx, lockHead, { chain: GLOBAL_CHAIN });
      const heads = rowsOf(
        await tx.execute(sql`select h.chain, h.seq::text as seq, h.hash from aura.audit_heads h
          left join aura.audit_sealed s on s.chain = h.chain
          where h.chain <> ${GLOBAL_CHAIN} and h.seq > 0 and (s.seq is null or s.seq < h.seq)
          order by h.chain limit ${limit}`),
      ).map((r) => ({ chain: String(r.chain), seq: Number(r.seq), hash: String(r.hash) }));
      if (heads.length === 0) return 0;
      await appendEntries(
        tx,
        key,
        [{ chain: GLOBAL_CHAIN, kind: 'chains-sealed', data: { heads } }],
        headOf(head),
      );
      await tx.execute(sql`insert into aura.audit_sealed (chain, seq)
        select r.chain, r.seq from jsonb_to_recordset(${JSON.stringify(heads)}::jsonb) as r(chain text, seq bigint)
        on conflict (chain) do update set seq = excluded.seq`);
      return heads.length;
    });
  } catch (error) {
    throw wrapDatabaseError(error, 'sealAudit');
  }
}

/** Options of {@link exportAudit}. */
export interface ExportAuditOptions {
  /** Only this chain's entries. */
  chain?: string;
  /** Only this conversation's entries (its chain). */
  conversationId?: string;
  /** Only entries at or after this time. */
  since?: Date;
  /** Only entries after this id (the last `id` of a previous page). */
  after?: string;
  /** At most this many entries in all; default: all. */
  limit?: number;
  /** Entries read per statement; default 1,000. */
  pageSize?: number;
}

/**
 * The audit log's entries in insertion order (`id`), streamed a page at a time, e.g. as
 * JSON lines: `for await (const e of exportAudit(db)) out.write(JSON.stringify(e) + '\n')`.
 * @throws {AskUserError} `invalid_argument` for a bad `since` or `after`, `unavailable`.
 */
export async function* exportAudit(
  db: AskUserDatabase,
  options: ExportAuditOptions = {},
): AsyncGenerator<AuditEntry> {
  const { since, after } = options;
  if (since !== undefined && (!(since instanceof Date) || Number.isNaN(since.getTime()))) {
    throw new AskUserError('invalid_argument', 'exportAudit needs a valid Date for since');
  }
  if (after !== undefined && !/^\d{1,19}$/.test(after)) {
    throw new AskUserError('invalid_argument', 'exportAudit after must be an entry id');
  }
  const chain =
    options.chain ??
    (options.conversationId === undefined ? undefined : conversationChain(options.conversationId));
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? 1000));
  let left = options.limit === undefined ? Number.POSITIVE_INFINITY : Math.max(0, options.limit);
  let cursor = after ?? '0';
  while (left > 0) {
    const filters: SQL[] = [sql`e.id > ${cursor}::bigint`];
    if (chain !== undefined) filters.push(sql`e.chain = ${chain}`);
    if (since !== undefined) filters.push(sql`e.at >= ${since.toISOString()}::timestamptz`);
    let rows: Record<string, unknown>[];
    try {
      rows = rowsOf(
        await db.execute(sql`select ${entryColumns} from aura.audit_entries e
          where ${sql.join(filters, sql` and `)} order by e.id limit ${Math.min(pageSize, left)}`),
      );
    } catch (error) {
      throw wrapDatabaseError(error, 'exportAudit');
    }
    for (const row of rows) yield toEntry(row);
    if (rows.length < Math.min(pageSize, left)) return;
    left -= rows.length;
    cursor = String(rows.at(-1)?.id);
  }
}

/**
 * Removes the entries older than `cutoff` from every chain but the global one, and appends
 * to each such chain a `chain-purged` entry naming the last removed entry (`throughSeq`,
 * `throughHash`), which carries the chain forward: {@link verifyAudit} accepts a chain that
 * starts after a signed purge entry says so. Returns how many entries it removed.
 * @throws {AskUserError} `invalid_argument` for a bad cutoff or key, `unavailable`.
 */
export async function purgeAuditOlderThan(
  db: AskUserDatabase,
  cutoff: Date,
  options: { key: AuditKey },
): Promise<number> {
  if (!(cutoff instanceof Date) || Number.isNaN(cutoff.getTime())) {
    throw new AskUserError('invalid_argument', 'purgeAuditOlderThan needs a valid Date cutoff');
  }
  const key = keyBytes(options.key);
  const at = cutoff.toISOString();
  try {
    return await db.transaction(async (tx) => {
      const chains = rowsOf(
        await tx.execute(sql`select distinct chain from aura.audit_entries
          where at < ${at}::timestamptz and chain <> ${GLOBAL_CHAIN} order by chain`),
      ).map((r) => String(r.chain));
      let removed = 0;
      for (const chain of chains) {
        await tx.execute(sql`select 1 from aura.audit_heads where chain = ${chain} for update`);
        const [through] = rowsOf(
          await tx.execute(sql`select e.seq::text as seq, e.hash from aura.audit_entries e
            where e.chain = ${chain} and e.seq = (select max(m.seq) from aura.audit_entries m
              where m.chain = ${chain} and m.at < ${at}::timestamptz)`),
        );
        if (through === undefined) continue;
        const deleted = rowsOf(
          await tx.execute(sql`with gone as (delete from aura.audit_entries
            where chain = ${chain} and seq <= ${Number(through.seq)} returning 1)
            select count(*)::int as n from gone`),
        );
        const count = Number(deleted[0]?.n ?? 0);
        removed += count;
        await appendEntries(tx, key, [
          {
            chain,
            kind: 'chain-purged',
            data: {
              throughSeq: Number(through.seq),
              throughHash: String(through.hash),
              count,
              cutoff: at,
            },
          },
        ]);
      }
      return removed;
    });
  } catch (error) {
    throw wrapDatabaseError(error, 'purgeAuditOlderThan');
  }
}
