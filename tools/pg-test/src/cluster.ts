import { execFile, spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  mkdtempSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A PostgreSQL server of the caller's own, in a temp folder on a free port: the only kind a
 * test may stop, kill or restart (the machine's own server is never touched).
 */
export interface ThrowawayCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`, trust auth. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (`pg_ctl stop -m fast`); its data stays for {@link start}. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops it if running and removes its folder. */
  destroy(): Promise<void>;
}

/** The folder holding `initdb`, `pg_ctl` and `postgres`, or undefined when none is installed. */
export function postgresBinDir(): string | undefined {
  const candidates = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  } catch {
    // Not a Debian-style install: PATH is all there is.
  }
  return candidates.find((dir) =>
    ['initdb', 'pg_ctl'].every((tool) => {
      try {
        accessSync(path.join(dir, tool), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }),
  );
}

/**
 * Why a throwaway cluster cannot be made here (no `initdb`, or root without a `postgres`
 * user to run it as), or undefined when it can.
 */
export function throwawayClusterProblem(): string | undefined {
  if (!postgresBinDir())
    return 'initdb and pg_ctl are not installed (PATH or /usr/lib/postgresql/*/bin)';
  if (isRoot() && !postgresUser()) {
    return 'running as root, and there is no postgres OS user to run the server as';
  }
  return undefined;
}

/** Whether this process runs as root (servers then run as the `postgres` OS user). */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** The `postgres` OS user's ids, or undefined when there is none. */
export function postgresUser(): { uid: number; gid: number } | undefined {
  const uid = spawnSync('id', ['-u', 'postgres']);
  const gid = spawnSync('id', ['-g', 'postgres']);
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.toString()), gid: Number(gid.stdout.toString()) };
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Creates and starts a throwaway cluster: `initdb` in a temp folder, trust auth on
 * 127.0.0.1 only, a free port, its socket in its own folder. As root, the server runs as
 * the `postgres` OS user (PostgreSQL refuses to run as root). Call `destroy()` at the end.
 */
export async function startThrowawayCluster(): Promise<ThrowawayCluster> {
  const problem = throwawayClusterProblem();
  if (problem) throw new Error(`cannot start a throwaway PostgreSQL cluster: ${problem}`);
  const bin = postgresBinDir()!;
  const root = mkdtempSync(path.join(tmpdir(), 'x-pg-cluster-'));
  const data = path.join(root, 'data');
  const log = path.join(root, 'server.log');
  const asOwner = (tool: string, args: string[]) =>
    isRoot()
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], {
          timeout: 120_000,
        })
      : run(path.join(bin, tool), args, { timeout: 120_000 });
  const owner = isRoot() ? postgresUser() : undefined;
  if (owner) {
    chmodSync(root, 0o755);
    chownSync(root, owner.uid, owner.gid);
  }
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${root}`,
    "-c listen_addresses='127.0.0.1'",
    '-c fsync=off',
    '-c max_connections=200',
  ].join(' ');
  let running = false;
  const cluster: ThrowawayCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      await asOwner('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      running = false;
    },
    async start() {
      await asOwner('pg_ctl', ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', 'start']);
      running = true;
    },
    async destroy() {
      try {
        if (running) await cluster.stop();
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
  try {
    await asOwner('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '--no-instructions',
      '-E',
      'UTF8',
    ]);
    await cluster.start();
  } catch (error) {
    await cluster.destroy().catch(() => {});
    throw error;
  }
  return cluster;
}
