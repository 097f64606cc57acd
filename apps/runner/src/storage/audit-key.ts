import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Env, setting, VARIABLES } from '../config/index.js';
import { RunnerError, usageError } from '../errors.js';

/** The embedded default's key file, in the data folder beside (not inside) its database. */
const AUDIT_KEY_FILE = 'audit.key';

/** The audit log's signing key, and whether this call made its file. */
interface ResolvedAuditKey {
  key: string;
  /** The file it was read from or written to, if any. */
  file?: string;
  /** The file was made now (first use of the embedded default). */
  created?: boolean;
}

/** Options of {@link resolveAuditKey}. */
interface ResolveAuditKeyOptions {
  kind: 'embedded' | 'postgres';
  /** The embedded default's data folder (where its key file is made). */
  dataDir: string;
  /** Whether the audit log already holds entries: a new key would make them all unverifiable. */
  hasEntries: () => Promise<boolean>;
  env?: Env;
}

/** The key in `file`, without a trailing newline; refused when unreadable or short. */
function readKeyFile(file: string, variable: string): string {
  let key: string;
  try {
    key = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    const reason = code === 'ENOENT' ? 'no such file' : (code ?? (error as Error).message);
    throw usageError(`cannot read the audit key file ${file} (${variable}): ${reason}`);
  }
  if (Buffer.byteLength(key) < 16) {
    throw usageError(`the audit key file ${file} (${variable}) must hold at least 16 bytes`);
  }
  return key;
}

/**
 * The audit log's signing key, kept outside the database: RUNNER_AUDIT_KEY_FILE's content,
 * or RUNNER_AUDIT_KEY; else, on the embedded default, the data folder's `audit.key`, made on
 * first use with mode 0600 (refused when the log already has entries: they were signed with
 * a key that is gone); else (PostgreSQL) undefined: no audit log.
 * @throws a usage error for both variables set, or an unreadable or short key file.
 */
export async function resolveAuditKey(
  options: ResolveAuditKeyOptions,
): Promise<ResolvedAuditKey | undefined> {
  const fromFile = setting(VARIABLES.RUNNER_AUDIT_KEY_FILE, options.env);
  const given = setting(VARIABLES.RUNNER_AUDIT_KEY, options.env);
  if (fromFile !== undefined && given !== undefined) {
    throw usageError('set RUNNER_AUDIT_KEY_FILE or RUNNER_AUDIT_KEY, not both');
  }
  if (fromFile !== undefined) {
    const file = path.resolve(fromFile);
    return { key: readKeyFile(file, 'RUNNER_AUDIT_KEY_FILE'), file };
  }
  if (given !== undefined) return { key: given };
  if (options.kind === 'postgres') return undefined;
  const file = path.join(path.resolve(options.dataDir), AUDIT_KEY_FILE);
  if (existsSync(file)) return { key: readKeyFile(file, 'the data folder'), file };
  if (await options.hasEntries()) {
    throw new RunnerError(
      'unavailable',
      `the audit log of ${path.dirname(file)} has entries but its key file ${file} is missing: restore it (or set RUNNER_AUDIT_KEY_FILE to where it is kept)`,
    );
  }
  const key = randomBytes(32).toString('hex');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return { key, file, created: true };
}
