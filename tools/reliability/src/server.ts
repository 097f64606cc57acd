import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { createTestDatabase, serverProblem, testServerUrl } from '@internal/pg-test';
import postgres from 'postgres';

const run = promisify(execFile);

/** The server the suite uses: `TEST_DATABASE_URL`, else the local default. */
export const serverUrl = testServerUrl;

/** Why the server cannot be used, or undefined when it answers. */
export const probe = serverProblem;

/** A database of this run's own: `x_rel_<random>`, dropped at the end. */
export interface RunDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Creates `x_rel_<pid>_<random>` on the server. */
export function createDatabase(server = serverUrl()): Promise<RunDatabase> {
  return createTestDatabase(server, 'x_rel');
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
