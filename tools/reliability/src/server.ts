import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import postgres from 'postgres';

const run = promisify(execFile);

/** The server the suite uses: `TEST_DATABASE_URL`, else the local default. */
export function serverUrl(): string {
  return process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** Why the server cannot be used, or undefined when it answers. */
export async function probe(url = serverUrl()): Promise<string | undefined> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** A database of this run's own: `x_rel_<random>`, dropped at the end. */
export interface RunDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createDatabase(server = serverUrl()): Promise<RunDatabase> {
  const name = `x_rel_${randomBytes(4).toString('hex')}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const sql = postgres(server, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await sql.end();
      }
    },
  };
}

/** A small postgres.js client for checks and fault injection. */
export function client(url: string, max = 4): postgres.Sql {
  return postgres(url, { max, onnotice: () => {} });
}

/**
 * Stops or starts the local cluster with `pg_ctlcluster` (as root, which CI is). Resolves to
 * why it cannot, or undefined when it did.
 */
export async function pgCluster(action: 'stop' | 'start' | 'status'): Promise<string | undefined> {
  let version: string | undefined;
  try {
    version = readdirSync('/etc/postgresql')[0];
  } catch {
    return 'no /etc/postgresql: not a Debian-style cluster this suite can stop and start';
  }
  if (!version) return 'no cluster under /etc/postgresql';
  try {
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', action], {
      timeout: 60_000,
    });
    return undefined;
  } catch (error) {
    const e = error as { stderr?: string; message?: string; code?: number };
    // `status` exits 3 when stopped: not a failure of the tool.
    if (action === 'status' && e.code === 3) return 'stopped';
    return (e.stderr || e.message || String(error)).trim();
  }
}

/** True when this process may stop and start the cluster (root, pg_ctlcluster present). */
export async function canControlCluster(): Promise<string | undefined> {
  if (process.env.RELIABILITY_NO_RESTART === '1') return 'RELIABILITY_NO_RESTART=1';
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return 'not running as root: pg_ctlcluster cannot stop the server';
  }
  if (!new URL(serverUrl()).hostname.match(/^(127\.0\.0\.1|localhost|::1)$/)) {
    return 'the server is not local';
  }
  return pgCluster('status');
}
