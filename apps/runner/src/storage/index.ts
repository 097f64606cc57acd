import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  MIGRATIONS_SCHEMA as ASKUSER_SCHEMA,
  MIGRATIONS_TABLE as ASKUSER_TABLE,
  exportAudit,
} from '@x/askuser';
import {
  MIGRATIONS_SCHEMA as CONTINUATION_SCHEMA,
  MIGRATIONS_TABLE as CONTINUATION_TABLE,
} from '@x/continuation-postgres';
import {
  MIGRATIONS_SCHEMA as EXECUTIVE_SCHEMA,
  MIGRATIONS_TABLE as EXECUTIVE_TABLE,
  migrate as migrateExecutive,
} from '@x/executive';
import {
  migrate as migrateNotify,
  MIGRATIONS_SCHEMA as NOTIFY_SCHEMA,
  MIGRATIONS_TABLE as NOTIFY_TABLE,
} from '@x/notify';
import { type AppliedMigrations, migrationsApplied } from '@x/postgres-kit';
import {
  MIGRATIONS_SCHEMA as SESSION_SCHEMA,
  MIGRATIONS_TABLE as SESSION_TABLE,
} from '@x/session-postgres';
import { sql } from 'drizzle-orm';
import { postgresCause, RunnerError } from '../errors.js';
import { resolveAuditKey } from './audit-key.js';
import { migrateRunner, RUNNER_SCHEMA } from './operators.js';
import type { AuditHolder, Db, Storage } from './stores.js';

export type { Db, Storage } from './stores.js';

/** The migrations {@link migrateAll} applies: each package's shipped `drizzle/` folder, and the runner's. */
const MIGRATIONS: readonly AppliedMigrations[] = [
  { folder: shipped('@x/askuser'), schema: ASKUSER_SCHEMA, table: ASKUSER_TABLE },
  {
    folder: shipped('@x/continuation-postgres'),
    schema: CONTINUATION_SCHEMA,
    table: CONTINUATION_TABLE,
  },
  { folder: shipped('@x/session-postgres'), schema: SESSION_SCHEMA, table: SESSION_TABLE },
  { folder: shipped('@x/executive'), schema: EXECUTIVE_SCHEMA, table: EXECUTIVE_TABLE },
  { folder: shipped('@x/notify'), schema: NOTIFY_SCHEMA, table: NOTIFY_TABLE },
  { folder: new URL('../../drizzle', import.meta.url), schema: RUNNER_SCHEMA },
];

function shipped(name: string): URL {
  return new URL('./drizzle', import.meta.resolve(`${name}/package.json`));
}

/**
 * Applies every package's migrations, then the runner's own (idempotent). Returns how many
 * stuck runs the run queue's repair made claimable again, for the caller to say.
 */
export async function migrateAll(db: Db): Promise<{ repairedRuns: number }> {
  // The executive's (with the stores it composes) and @x/notify's before the runner's own:
  // the runner's migrations 0006 and 0007 copy its old tables' rows into theirs.
  const { repairedRuns } = await migrateExecutive(db);
  await migrateNotify(db);
  await migrateRunner(db);
  return { repairedRuns };
}

async function needsMigration(db: Db): Promise<boolean> {
  const result = (await db.execute(
    sql`select to_regclass('aura.paused_states') is null as missing`,
  )) as unknown;
  const rows = Array.isArray(result) ? result : ((result as { rows: unknown[] }).rows ?? []);
  return Boolean((rows[0] as { missing?: boolean } | undefined)?.missing);
}

/** Options of {@link openStorage}. */
export interface OpenStorageOptions {
  /** The embedded default's data folder. */
  dataDir: string;
  /** PostgreSQL URL; when set, everything lives there. */
  databaseUrl?: string | undefined;
  /** The command opening it, named in the lock file. */
  command: string;
  /** Where to say that migrations were applied. */
  log: (line: string) => void;
  /**
   * Whether a data folder that does not exist yet is created (default true): only for a
   * command that writes, so that a mistyped --data is an error, not a new empty store.
   */
  create?: boolean;
  /** Where to say that the data folder was created (default `log`). */
  created?: (line: string) => void;
}

/**
 * Opens the embedded default (PGlite + files in `dataDir`) or, with `databaseUrl`,
 * PostgreSQL. Applies migrations on first use, saying so.
 */
export async function openStorage(options: OpenStorageOptions): Promise<Storage> {
  const created = options.databaseUrl ? undefined : newDataFolder(options);
  const audit: AuditHolder = {};
  // Each loaded only where it is used: PGlite's module is large, and idle on PostgreSQL.
  const storage = options.databaseUrl
    ? await (await import('./postgres.js')).openPostgres(options.databaseUrl, audit)
    : await (await import('./embedded.js')).openEmbedded(options.dataDir, options.command, audit);
  try {
    // Every start but the first: one read confirms it, instead of each package's own two.
    if (created || !(await migrationsApplied(storage.db, MIGRATIONS))) {
      if (!created && (await needsMigration(storage.db))) {
        options.log(`setting up the database in ${storage.where} (first use: applying migrations)`);
      }
      const { repairedRuns } = await migrateAll(storage.db);
      if (repairedRuns > 0) {
        options.log(
          `repaired the claim order of ${repairedRuns} run${repairedRuns === 1 ? '' : 's'} in ${storage.where}: overlapping writes of the previous version had left them where no worker could claim them; they are claimable again`,
        );
      }
    }
    const resolved = await resolveAuditKey({
      kind: storage.kind,
      dataDir: options.dataDir,
      hasEntries: async () => {
        for await (const _ of exportAudit(storage.db, { limit: 1 })) return true;
        return false;
      },
    });
    audit.key = resolved?.key;
    const keyMade = resolved?.created ? `the audit key ${resolved.file} (mode 0600)` : undefined;
    if (created) {
      const withKey = keyMade ? `, with ${keyMade}` : '';
      (options.created ?? options.log)(`created the data folder ${created} (first use)${withKey}`);
    } else if (keyMade) {
      (options.created ?? options.log)(`created ${keyMade} for the audit log (first use)`);
    }
  } catch (error) {
    await storage.close().catch(() => {});
    const cause = storage.kind === 'postgres' ? postgresCause(error) : undefined;
    if (cause === undefined) throw error;
    throw new RunnerError('unavailable', `cannot use PostgreSQL at ${storage.where}: ${cause}`, {
      cause: error,
    });
  }
  return storage;
}

/**
 * The data folder when it does not exist yet and may be created, undefined when it exists;
 * refuses one that does not exist for a command that only reads or changes what is stored.
 */
function newDataFolder(options: OpenStorageOptions): string | undefined {
  const dir = path.resolve(options.dataDir);
  if (existsSync(dir)) return undefined;
  if (options.create ?? true) return dir;
  throw new RunnerError(
    'unavailable',
    `the data folder ${dir} does not exist: check --data (or RUNNER_DATA); \`runner ${options.command}\` reads an existing store, exec, chat, serve, migrate and operators add create one`,
  );
}
