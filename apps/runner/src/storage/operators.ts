import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ACCESS_ROLES, type AccessRole, accessOf, isRoleName } from '@x/approval-center';
import type { Identity } from '@x/askuser';
import { applyMigrations, type StoreDatabase as Db, rowsOf, sqlStateOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { notFoundError, RunnerError, usageError } from '../errors.js';

/** An operator as `runner operators list` shows it (never the key). */
export interface OperatorRecord {
  name: string;
  /** The access role first, then the audience roles (`finance`, ...). */
  roles: string[];
  createdAt: Date;
  /** When the current key was made (by `add` or `rotate`). */
  keyCreatedAt: Date;
  revokedAt: Date | null;
}

/** An operator who presented a live key: who they are for the askuser store. */
interface SignedIn extends Identity {
  access: AccessRole;
  /** The id of the key they presented: a page session opened with it ends when it is rotated. */
  keyId: string;
}

const NAME = /^[A-Za-z0-9][\w.@-]{0,99}$/;
const KEY_PREFIX = 'runner_';
const KEY_ID = /^[0-9a-f]{16}$/;

/** The schema of the runner's migrations table (its tables are in `runner`). */
export const RUNNER_SCHEMA = 'x_runner';

/**
 * Applies the runner's own migrations (`drizzle/`, schema `runner`), recorded in
 * `x_runner.__migrations` as the packages record theirs.
 */
export async function migrateRunner(db: Db): Promise<void> {
  // The lock key "rnnr" serialises concurrent migrations of the runner.
  await applyMigrations(db, {
    folder: new URL('../../drizzle', import.meta.url),
    schema: RUNNER_SCHEMA,
    lockKey: 0x726e6e72,
  });
}

/**
 * The roles of `add NAME --role ...`: one access role (default `operator`) and any
 * audience roles, each once.
 * @throws a usage error for a malformed role or two access roles.
 */
function rolesOf(given: readonly string[]): string[] {
  for (const role of given) {
    if (!isRoleName(role)) {
      throw usageError(
        `--role "${role}" is not a role name: use lower-case letters, digits, '_' and '-'`,
      );
    }
  }
  const access = ACCESS_ROLES.filter((role) => given.includes(role));
  if (access.length > 1) {
    throw usageError(`give one of --role admin, operator or viewer, not ${access.join(' and ')}`);
  }
  const audience = [...new Set(given.filter((role) => !access.includes(role as AccessRole)))];
  return [access[0] ?? 'operator', ...audience];
}

const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** A new key and what is stored of it: a key id to find it, the SHA-256 of its secret. */
function newKey(): { key: string; keyId: string; keyHash: string } {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { key: `${KEY_PREFIX}${keyId}_${secret}`, keyId, keyHash: hashOf(secret) };
}

const asDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)));

function recordOf(row: Record<string, unknown>): OperatorRecord {
  return {
    name: String(row.name),
    roles: row.roles as string[],
    createdAt: asDate(row.created_at),
    keyCreatedAt: asDate(row.key_created_at),
    revokedAt: row.revoked_at == null ? null : asDate(row.revoked_at),
  };
}

/**
 * The runner's operators (`runner.operators`): names, roles and API keys kept only as
 * SHA-256 hashes of their high-entropy secrets.
 */
export class OperatorStore {
  constructor(private readonly db: Db) {}

  /**
   * Adds an operator with {@link rolesOf} `given`; returns their roles and the key, which
   * is stored nowhere.
   * @throws a usage error for a malformed name or roles; a conflict when the name was used before.
   */
  async add(name: string, given: readonly string[]): Promise<{ roles: string[]; key: string }> {
    if (!NAME.test(name)) {
      throw usageError(
        `"${name}" is not an operator name: up to 100 letters, digits, '.', '_', '@' and '-'`,
      );
    }
    const roles = rolesOf(given);
    const { key, keyId, keyHash } = newKey();
    try {
      await this.db.execute(sql`insert into runner.operators (name, roles, key_id, key_hash)
        values (${name}, string_to_array(${roles.join(',')}, ','), ${keyId}, ${keyHash})`);
    } catch (error) {
      if (sqlStateOf(error) !== '23505') throw error;
      throw new RunnerError(
        'conflict',
        `an operator named ${name} exists already (revoked names are not reused)`,
        { cause: error },
      );
    }
    return { roles, key };
  }

  /** Every operator, revoked ones included, by name. */
  async list(): Promise<OperatorRecord[]> {
    const result = await this.db.execute(sql`select name, roles, created_at, key_created_at,
      revoked_at from runner.operators order by name`);
    return rowsOf(result).map(recordOf);
  }

  /** True when at least one operator is not revoked: then `serve` asks every request for a key. */
  async anyLive(): Promise<boolean> {
    const result = await this.db.execute(
      sql`select exists (select 1 from runner.operators where revoked_at is null) as live`,
    );
    return Boolean(rowsOf(result)[0]?.live);
  }

  /**
   * Revokes an operator: their key stops working at once. Returns the roles they had.
   * @throws not found for an unknown or already revoked name.
   */
  async revoke(name: string): Promise<{ roles: string[] }> {
    const result = await this.db.execute(sql`update runner.operators set revoked_at = now()
      where name = ${name} and revoked_at is null returning roles`);
    const row = rowsOf(result)[0];
    if (!row) throw notFoundError(`no live operator is named ${name}`);
    return { roles: row.roles as string[] };
  }

  /**
   * Gives an operator a new key and returns it with their roles; the old key stops working
   * at once.
   * @throws not found for an unknown or revoked name.
   */
  async rotate(name: string): Promise<{ roles: string[]; key: string }> {
    const { key, keyId, keyHash } = newKey();
    const result = await this.db.execute(sql`update runner.operators
      set key_id = ${keyId}, key_hash = ${keyHash}, key_created_at = now()
      where name = ${name} and revoked_at is null returning roles`);
    const row = rowsOf(result)[0];
    if (!row) throw notFoundError(`no live operator is named ${name}`);
    return { roles: row.roles as string[], key };
  }

  /** The live operator whose key `key` is, or undefined (malformed, unknown, rotated, revoked). */
  async authenticate(key: string): Promise<SignedIn | undefined> {
    const keyId = keyIdOf(key);
    if (keyId === undefined) return undefined;
    const secret = key.slice(KEY_PREFIX.length + 17);
    const result = await this.db.execute(sql`select name, roles, key_hash from runner.operators
      where key_id = ${keyId} and revoked_at is null`);
    const row = rowsOf(result)[0];
    if (!row) return undefined;
    const stored = Buffer.from(String(row.key_hash), 'hex');
    if (!timingSafeEqual(Buffer.from(hashOf(secret), 'hex'), stored)) return undefined;
    const roles = row.roles as string[];
    return { name: String(row.name), roles, access: accessOf(roles), keyId };
  }

  /**
   * The operator a key names by its key id, whether or not its secret is right (revoked
   * ones too), or undefined: whom a failed sign-in tried to sign in as.
   */
  async ownerOf(key: string): Promise<string | undefined> {
    const keyId = keyIdOf(key);
    if (keyId === undefined) return undefined;
    const result = await this.db.execute(
      sql`select name from runner.operators where key_id = ${keyId}`,
    );
    const row = rowsOf(result)[0];
    return row ? String(row.name) : undefined;
  }
}

/** The key id of a well-formed `runner_<key id>_<secret>` key, else undefined. */
function keyIdOf(key: string): string | undefined {
  if (!key.startsWith(KEY_PREFIX) || key[KEY_PREFIX.length + 16] !== '_') return undefined;
  const keyId = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + 16);
  return KEY_ID.test(keyId) ? keyId : undefined;
}
