// Internal: how an audit entry is hashed, signed and appended to its chain.
import { hash as digest, timingSafeEqual } from 'node:crypto';
import { prepareOnce, runPrepared } from '@x/postgres-kit';
import { type SQL, sql } from 'drizzle-orm';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { AskUserDatabase } from './database.js';
import { AskUserError } from './errors.js';
import { marked } from './write-mark.js';

/** The `prev` of a chain's first entry: 64 zeros. */
export const GENESIS = '0'.repeat(64);

/** The chain that seals the heads of all others (written by `sealAudit`). */
export const GLOBAL_CHAIN = 'global';

/** The version of the hashed layout; a verifier refuses an entry of another. */
const LAYOUT = 1;

/** The chain of a conversation's questions. */
export function conversationChain(conversationId: string): string {
  return `conversation:${conversationId}`;
}

/**
 * An HMAC key as bytes: a string is taken as its UTF-8 bytes.
 * @throws {AskUserError} `invalid_argument` for a key under 16 bytes.
 */
export function keyBytes(key: string | Uint8Array): Buffer {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
  if (bytes.length < 16) {
    throw new AskUserError(
      'invalid_argument',
      'the audit key must be at least 16 bytes (32 random bytes recommended), kept outside the database',
    );
  }
  return bytes;
}

/** JSON text with object keys sorted, so equal data always hashes the same. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) sorted[key] = sortKeys(item);
  }
  return sorted;
}

/** The fields of an entry that its hash covers. */
export interface HashedFields {
  chain: string;
  seq: number;
  kind: string;
  /** ISO 8601 with milliseconds, as `Date.toISOString()` writes it. */
  at: string;
  token: string | null;
  body: string;
  prev: string;
}

/** SHA-256 (hex) of the entry's fields and the hash before it. */
export function entryHash(e: HashedFields): string {
  const text = JSON.stringify([LAYOUT, e.chain, e.seq, e.kind, e.at, e.token, e.body, e.prev]);
  return digest('sha256', text, 'hex');
}

/** SHA-256's block: the length of an HMAC pad. */
const BLOCK = 64;

/** A key's HMAC pads (RFC 2104), each followed by room for what is hashed after it. */
interface Pads {
  /** The key ⊕ ipad, then room for an entry hash (64 hex digits). */
  inner: Buffer;
  /** The key ⊕ opad, then room for the inner digest. */
  outer: Buffer;
}

const padsOfKey = new WeakMap<Buffer, Pads>();

/** The pads of `key`, made once per key: a key longer than a block is hashed first. */
function padsOf(key: Buffer): Pads {
  let pads = padsOfKey.get(key);
  if (pads === undefined) {
    const k = key.length > BLOCK ? digest('sha256', key, 'buffer') : key;
    pads = { inner: Buffer.alloc(BLOCK + 64), outer: Buffer.alloc(BLOCK + 32) };
    for (let i = 0; i < BLOCK; i++) {
      pads.inner[i] = (k[i] ?? 0) ^ 0x36;
      pads.outer[i] = (k[i] ?? 0) ^ 0x5c;
    }
    padsOfKey.set(key, pads);
  }
  return pads;
}

/** HMAC-SHA256 (hex) of an entry hash: byte for byte `createHmac`'s, from the key's pads. */
export function sign(key: Buffer, hash: string): string {
  const { inner, outer } = padsOf(key);
  // An entry hash is written into the pad's room (no allocation); other text is appended.
  let message = inner;
  if (Buffer.byteLength(hash) === 64) inner.write(hash, BLOCK);
  else message = Buffer.concat([inner.subarray(0, BLOCK), Buffer.from(hash)]);
  digest('sha256', message, 'buffer').copy(outer, BLOCK);
  return digest('sha256', outer, 'hex');
}

/** Whether `sig` is the HMAC of `hash` under `key` (compared in constant time). */
export function signatureValid(key: Buffer, hash: string, sig: string): boolean {
  const want = Buffer.from(sign(key, hash), 'hex');
  const got = Buffer.from(sig, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** One entry to append. */
export interface NewEntry {
  chain: string;
  kind: string;
  token?: string | null;
  data: unknown;
}

/** A chain's last entry, locked by the transaction that read it. */
export interface LockedHead {
  chain: string;
  seq: number;
  hash: string;
}

/**
 * The statement that locks a chain's head row for the rest of the transaction and returns it:
 * `select … for update` when it exists (no new row version), an insert when it is missing
 * (two first appends of a chain meet on its key, and the second then takes the first's head).
 */
function lockHeadStatement(chain: SQL): SQL {
  return sql`with locked as (
      select chain, seq, hash from aura.audit_heads where chain = ${chain} for update
    ), made as (
      insert into aura.audit_heads (chain, seq, hash)
      select ${chain}, 0, ${GENESIS} where not exists (select 1 from locked)
      on conflict (chain) do update set seq = aura.audit_heads.seq
      returning chain, seq, hash
    )
    select chain, seq::text as seq, hash from locked
    union all select chain, seq::text as seq, hash from made`;
}

/** {@link lockHeadStatement} of the chain named `chain`, compiled once per process. */
export const lockHead = prepareOnce(() =>
  lockHeadStatement(sql`${sql.placeholder('chain')}::text`),
);

/**
 * The single-entry insert, compiled once per process: the same statement moves the chain's
 * head (locked by the caller), and marks the entry so that the head trigger skips it.
 */
export const appendEntry = prepareOnce(() => {
  const p = sql.placeholder;
  const mark = sql`${p('chain')}::text || ':' || ${p('seq')}::bigint`;
  return sql`with entry as (insert into aura.audit_entries (chain, seq, kind, at, token, body, prev, hash, sig)
      values (${marked('aura.audit_append', mark, sql`${p('chain')}::text`)}, ${p('seq')}::bigint,
        ${p('kind')}, ${p('at')}::timestamptz, ${p('token')}, ${p('body')}, ${p('prev')}, ${p('hash')}, ${p('sig')})
      returning chain, seq, hash)
    update aura.audit_heads h set seq = entry.seq, hash = entry.hash from entry where h.chain = entry.chain`;
});

/** A chain's next entries after `head`, hashed and signed, as {@link appendEntry} takes them. */
export function signedEntries(
  key: Buffer,
  head: LockedHead,
  entries: readonly NewEntry[],
  at: string = new Date().toISOString(),
) {
  let seq = head.seq;
  let prev = head.hash;
  return entries.map((entry) => {
    seq += 1;
    const fields: HashedFields = {
      chain: head.chain,
      seq,
      kind: entry.kind,
      at,
      token: entry.token ?? null,
      body: canonicalJson(entry.data),
      prev,
    };
    const hash = entryHash(fields);
    prev = hash;
    return { ...fields, hash, sig: sign(key, hash) };
  });
}

/**
 * Appends entries in the caller's transaction `tx`. Each chain's head row is locked (in
 * chain order, so two transactions never deadlock on heads) for the rest of `tx`: appends
 * to one chain are serialised, appends to different chains are not. `locked` is a head the
 * caller has locked already (one statement less). A single entry's insert moves its head
 * itself; several entries' insert leaves that to the trigger.
 */
export async function appendEntries(
  tx: AskUserDatabase,
  key: Buffer,
  entries: readonly NewEntry[],
  locked?: LockedHead,
): Promise<void> {
  const byChain = new Map<string, NewEntry[]>();
  for (const entry of entries) {
    const list = byChain.get(entry.chain) ?? [];
    list.push(entry);
    byChain.set(entry.chain, list);
  }
  const at = new Date().toISOString();
  for (const chain of [...byChain.keys()].sort()) {
    const head =
      locked?.chain === chain ? locked : headOf((await runPrepared(tx, lockHead, { chain }))[0]);
    const rows = signedEntries(key, head, byChain.get(chain) ?? [], at);
    const [only] = rows;
    if (rows.length === 1 && only !== undefined) {
      await runPrepared(tx, appendEntry, only);
      continue;
    }
    await tx.execute(sql`insert into aura.audit_entries (chain, seq, kind, at, token, body, prev, hash, sig)
      select r.chain, r.seq, r.kind, r.at, r.token, r.body, r.prev, r.hash, r.sig
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(chain text, seq bigint,
        kind text, at timestamptz, token text, body text, prev text, hash text, sig text)
      order by r.seq`);
  }
}

/** A head row as {@link lockHeadStatement} returns it. */
export function headOf(row: Record<string, unknown> | undefined): LockedHead {
  return {
    chain: String(row?.chain),
    seq: Number(row?.seq ?? 0),
    hash: String(row?.hash ?? GENESIS),
  };
}

/**
 * Runs `write` in `db`'s transaction when `db` is one (an error aborts it whole anyway), or
 * in a transaction of its own.
 */
export function inTransaction<T>(
  db: AskUserDatabase,
  write: (tx: AskUserDatabase) => Promise<T>,
): Promise<T> {
  return db instanceof PgTransaction ? write(db) : db.transaction(write);
}
