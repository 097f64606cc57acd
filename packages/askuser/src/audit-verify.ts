import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { type AuditEntry, type AuditKey, entryColumns, toEntry } from './audit.js';
import { entryHash, GENESIS, GLOBAL_CHAIN, keyBytes, signatureValid } from './audit-chain.js';
import type { AskUserDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';

/** The first bad entry of a chain (or a pause row that differs from its entry). */
export interface AuditProblem {
  chain: string;
  /** The bad entry's position in its chain (for a missing entry: where it should be). */
  seq: number;
  /** The bad entry's id, or `null` when the entry is missing. */
  id: string | null;
  /** The pause it is about, or `null`. */
  token: string | null;
  /** What is wrong, for a person. */
  reason: string;
}

/** What {@link verifyAudit} found. */
export interface AuditVerification {
  /** No problem found. */
  ok: boolean;
  /** Entries read. */
  entries: number;
  /** Chains read. */
  chains: number;
  /** The first bad entry of each bad chain, then pauses that differ from the log (at most `maxProblems`). */
  problems: AuditProblem[];
}

/** Options of {@link verifyAudit}. */
export interface VerifyAuditOptions {
  key: AuditKey;
  /** Entries read per statement; default 1,000. */
  pageSize?: number;
  /** Stop after this many problems; default 100. */
  maxProblems?: number;
}

/** Per chain: what the next entry must be. */
interface ChainState {
  chain: string;
  first: AuditEntry;
  last: AuditEntry;
  headSeq: number;
  headHash: string;
  /** The first entry follows a purge, and no signed `chain-purged` entry has said so yet. */
  unjustifiedStart: boolean;
  bad: boolean;
}

/**
 * Reads the whole audit log once, in pages (linear in its size), and reports the first bad
 * entry of each chain: an entry whose fields were edited (its hash differs), whose hash was
 * recomputed (its HMAC differs: that needs the key), an entry missing before another (a gap
 * in `seq` or a `prev` that does not match), an inserted one (the same), a chain whose
 * first entries were removed without a signed `chain-purged` entry, a chain shorter than its
 * head or than a head sealed into the global chain; then a pause whose stored answer differs
 * from the answer its audit entry recorded (or that was answered without one, or reopened).
 * @throws {AskUserError} `invalid_argument` for a short key, `unavailable`.
 * @example
 * const { ok, problems } = await verifyAudit(db, { key: process.env.AUDIT_KEY! });
 * if (!ok) console.error('first bad entry:', problems[0]);
 */
export async function verifyAudit(
  db: AskUserDatabase,
  options: VerifyAuditOptions,
): Promise<AuditVerification> {
  const key = keyBytes(options.key);
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? 1000));
  const maxProblems = Math.max(1, Math.floor(options.maxProblems ?? 100));
  const problems: AuditProblem[] = [];
  const report = (p: AuditProblem) => {
    if (problems.length < maxProblems) problems.push(p);
  };
  let entries = 0;
  let chains = 0;
  let state: ChainState | undefined;

  const endChain = (s: ChainState) => {
    if (s.bad) return;
    if (s.unjustifiedStart) {
      report(problemAt(s.first, `entries before it were removed without a chain-purged entry`));
    } else if (s.headSeq !== s.last.seq || s.headHash !== s.last.hash) {
      report({
        chain: s.chain,
        seq: s.last.seq + 1,
        id: null,
        token: null,
        reason: `the chain ends at seq ${s.last.seq} but its head is at seq ${s.headSeq}: entries after it were removed, or the head was changed`,
      });
    }
  };

  try {
    let cursor: { chain: string; seq: number } | undefined;
    for (;;) {
      const after = cursor ? sql`where (e.chain, e.seq) > (${cursor.chain}, ${cursor.seq})` : sql``;
      const rows = rowsOf(
        await db.execute(sql`select ${entryColumns}, h.seq::text as head_seq, h.hash as head_hash
          from aura.audit_entries e left join aura.audit_heads h on h.chain = e.chain
          ${after} order by e.chain, e.seq limit ${pageSize}`),
      );
      for (const row of rows) {
        const entry = toEntry(row);
        entries += 1;
        if (state?.chain !== entry.chain) {
          if (state) endChain(state);
          chains += 1;
          state = {
            chain: entry.chain,
            first: entry,
            last: entry,
            headSeq: 0,
            headHash: GENESIS,
            unjustifiedStart: entry.seq !== 1 || entry.prev !== GENESIS,
            bad: false,
          };
          if (entry.seq === 1 && entry.prev !== GENESIS) {
            state.bad = true;
            report(problemAt(entry, 'the first entry of its chain does not start from genesis'));
          }
        } else if (!state.bad) {
          if (entry.seq !== state.last.seq + 1) {
            state.bad = true;
            report(
              problemAt(
                entry,
                `entries ${state.last.seq + 1}..${entry.seq - 1} before it are missing`,
              ),
            );
          } else if (entry.prev !== state.last.hash) {
            state.bad = true;
            report(
              problemAt(
                entry,
                'it does not follow the entry before it (an entry was replaced or inserted)',
              ),
            );
          }
        }
        state.headSeq = Number(row.head_seq ?? 0);
        state.headHash = String(row.head_hash ?? GENESIS);
        if (!state.bad) {
          const fields = { ...entry, at: String(row.at), body: String(row.body) };
          if (entryHash(fields) !== entry.hash) {
            state.bad = true;
            report(problemAt(entry, 'its content was changed (its hash does not match)'));
          } else if (!signatureValid(key, entry.hash, entry.sig)) {
            state.bad = true;
            report(
              problemAt(entry, 'its signature is not valid: it was written without the audit key'),
            );
          } else if (entry.kind === 'chain-purged' && state.unjustifiedStart) {
            const { throughSeq, throughHash } = entry.data as {
              throughSeq?: number;
              throughHash?: string;
            };
            if (throughSeq === state.first.seq - 1 && throughHash === state.first.prev) {
              state.unjustifiedStart = false;
            }
          }
        }
        state.last = entry;
        if (problems.length >= maxProblems) break;
      }
      if (rows.length < pageSize || problems.length >= maxProblems) break;
      cursor = { chain: String(state?.last.chain), seq: Number(state?.last.seq) };
    }
    if (state) endChain(state);
    await checkHeadsAndSeals(db, report);
    await checkPauses(db, pageSize, report, () => problems.length >= maxProblems);
  } catch (error) {
    throw wrapDatabaseError(error, 'verifyAudit');
  }
  return { ok: problems.length === 0, entries, chains, problems };
}

function problemAt(entry: AuditEntry, reason: string): AuditProblem {
  return { chain: entry.chain, seq: entry.seq, id: entry.id, token: entry.token, reason };
}

/** Chains whose every entry is gone, and sealed heads that no longer match their chain. */
async function checkHeadsAndSeals(
  db: AskUserDatabase,
  report: (p: AuditProblem) => void,
): Promise<void> {
  const emptied = rowsOf(
    await db.execute(sql`select h.chain, h.seq::text as seq from aura.audit_heads h
      where h.seq > 0 and not exists (select 1 from aura.audit_entries e where e.chain = h.chain)
      order by h.chain`),
  );
  for (const row of emptied) {
    report({
      chain: String(row.chain),
      seq: 1,
      id: null,
      token: null,
      reason: `every entry of the chain was removed (its head is at seq ${row.seq})`,
    });
  }
  // A sealed head of a chain must still be there, unless a purge removed it since.
  const sealed = rowsOf(
    await db.execute(sql`with claims as (
        select g.seq as seal_seq, c.chain, c.seq, c.hash
        from aura.audit_entries g
        cross join lateral jsonb_to_recordset((g.body::jsonb)->'heads') as c(chain text, seq bigint, hash text)
        where g.chain = ${GLOBAL_CHAIN} and g.kind = 'chains-sealed'
      )
      select cl.chain, cl.seq::text as seq, cl.seal_seq::text as seal_seq, e.id::text as id, e.token
      from claims cl left join aura.audit_entries e on e.chain = cl.chain and e.seq = cl.seq
      where e.hash is distinct from cl.hash
        and cl.seq >= coalesce((select min(m.seq) from aura.audit_entries m where m.chain = cl.chain), 0)
      order by cl.seal_seq, cl.chain limit 100`),
  );
  for (const row of sealed) {
    report({
      chain: String(row.chain),
      seq: Number(row.seq),
      id: row.id === null || row.id === undefined ? null : String(row.id),
      token: row.token === null || row.token === undefined ? null : String(row.token),
      reason: `it differs from the head sealed in global entry ${row.seal_seq} (removed or replaced)`,
    });
  }
}

/** Pauses whose row says something else than the log: the answer, who, or whether answered. */
async function checkPauses(
  db: AskUserDatabase,
  pageSize: number,
  report: (p: AuditProblem) => void,
  full: () => boolean,
): Promise<void> {
  let cursor = '';
  for (;;) {
    const rows = rowsOf(
      await db.execute(sql`select p.token, p.resumed_at is not null as resolved,
          p.resumed_answer::text as answer, p.answered_by, r.id::text as id, r.chain,
          r.seq::text as seq, r.body
        from aura.paused_states p
        left join lateral (select e.id, e.chain, e.seq, e.body from aura.audit_entries e
          where e.token = p.token and e.kind in ('question-answered', 'question-cancelled', 'question-expired')
          order by e.id desc limit 1) r on true
        where p.token > ${cursor} and exists (select 1 from aura.audit_entries c
          where c.token = p.token and c.kind = 'question-created')
        order by p.token limit ${pageSize}`),
    );
    for (const row of rows) {
      const token = String(row.token);
      const reason = pauseMismatch(row);
      if (reason === undefined) continue;
      const hasEntry = row.id !== null && row.id !== undefined;
      report({
        chain: hasEntry ? String(row.chain) : '',
        seq: hasEntry ? Number(row.seq) : 0,
        id: hasEntry ? String(row.id) : null,
        token,
        reason: `pause ${token}: ${reason}`,
      });
      if (full()) return;
    }
    if (rows.length < pageSize) return;
    cursor = String(rows.at(-1)?.token);
  }
}

function pauseMismatch(row: Record<string, unknown>): string | undefined {
  const resolved = row.resolved === true || row.resolved === 't';
  if (row.id === null || row.id === undefined) {
    return resolved ? 'it is resolved, but the audit log has no answer for it' : undefined;
  }
  if (!resolved) return 'the audit log has its answer, but the row is pending again';
  const logged = JSON.parse(String(row.body)) as {
    action?: string;
    content?: string;
    by?: string | null;
  };
  const stored = JSON.parse(String(row.answer ?? 'null')) as {
    action?: string;
    content?: string;
  } | null;
  if (stored?.action !== logged.action || stored?.content !== logged.content) {
    return `its stored answer differs from the one the audit log recorded (${logged.action} ${JSON.stringify(logged.content)})`;
  }
  if ((row.answered_by ?? null) !== (logged.by ?? null)) {
    return `it says it was answered by ${JSON.stringify(row.answered_by)}, the audit log says ${JSON.stringify(logged.by ?? null)}`;
  }
  return undefined;
}
