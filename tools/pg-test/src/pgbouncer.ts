import { type ChildProcess, spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, isRoot, postgresUser } from './cluster.js';

const BINARY = '/usr/sbin/pgbouncer';

/** A PgBouncer of the caller's own, in transaction pooling mode, in front of one database. */
export interface PgBouncer {
  /** The pooled URL: `postgres://postgres@127.0.0.1:<port>/<database>`. */
  readonly url: string;
  stop(): Promise<void>;
}

/** Why a PgBouncer cannot be started here, or undefined when it can. */
export function pgBouncerProblem(): string | undefined {
  try {
    accessSync(BINARY, constants.X_OK);
  } catch {
    return `${BINARY} is not installed (Debian: apt-get install pgbouncer)`;
  }
  if (isRoot() && !postgresUser()) return 'running as root, and there is no postgres OS user';
  return undefined;
}

async function listening(port: number, deadline: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts PgBouncer 1.18 on a free port in `pool_mode = transaction` (what managed
 * Postgres poolers use), trust auth, in front of the database at `databaseUrl`, with at
 * most `poolSize` server connections. As root it runs as the `postgres` OS user.
 */
export async function startPgBouncer(databaseUrl: string, poolSize = 20): Promise<PgBouncer> {
  const problem = pgBouncerProblem();
  if (problem) throw new Error(`cannot start pgbouncer: ${problem}`);
  const target = new URL(databaseUrl);
  const database = target.pathname.slice(1);
  const dir = mkdtempSync(path.join(tmpdir(), 'x-pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(target.username || 'postgres');
  writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${database} = host=${target.hostname} port=${target.port || 5432} dbname=${database} user=${user}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      'ignore_startup_parameters = extra_float_digits,application_name',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const owner = isRoot() ? postgresUser() : undefined;
  if (owner) {
    chmodSync(dir, 0o755);
    for (const name of ['', 'users.txt', 'pgbouncer.ini']) {
      chownSync(path.join(dir, name), owner.uid, owner.gid);
    }
  }
  const command = owner
    ? ['runuser', ['-u', 'postgres', '--', BINARY, path.join(dir, 'pgbouncer.ini')]]
    : [BINARY, [path.join(dir, 'pgbouncer.ini')]];
  const child: ChildProcess = spawn(command[0] as string, command[1] as string[], {
    stdio: 'ignore',
  });
  const stop = async () => {
    // runuser does not pass signals on: stop pgbouncer itself, by its pid file.
    try {
      process.kill(Number(readFileSync(path.join(dir, 'pgbouncer.pid'), 'utf8')), 'SIGINT');
    } catch {
      child.kill('SIGKILL');
    }
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await listening(port, Date.now() + 30_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgres://${user}@127.0.0.1:${port}/${database}`, stop };
}
