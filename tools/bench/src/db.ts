import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

/** The server the bench uses: `BENCH_DATABASE_URL`, `TEST_DATABASE_URL`, or the local default. */
export function serverUrl(): string {
  return (
    process.env.BENCH_DATABASE_URL ||
    process.env.TEST_DATABASE_URL ||
    'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

/** Why the server cannot be used, or undefined when it answers. */
export async function probe(url: string): Promise<string | undefined> {
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

/** A database of the bench's own, created for this run and dropped at its end. */
export interface BenchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Creates `x_bench_<random>` on the server. */
export async function createDatabase(server: string, suffix = ''): Promise<BenchDatabase> {
  const name = `x_bench_${randomBytes(4).toString('hex')}${suffix}`;
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
