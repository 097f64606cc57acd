import { createTestDatabase, serverProblem } from '@internal/pg-test';

/** The server the bench uses: `BENCH_DATABASE_URL`, `TEST_DATABASE_URL`, or the local default. */
export function serverUrl(): string {
  return (
    process.env.BENCH_DATABASE_URL ||
    process.env.TEST_DATABASE_URL ||
    'postgres://postgres@127.0.0.1:5432/postgres'
  );
}

/** Why the server cannot be used, or undefined when it answers. */
export const probe = serverProblem;

/** A database of the bench's own, created for this run and dropped at its end. */
export interface BenchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Creates `x_bench_<pid>_<random>` on the server. */
export function createDatabase(server: string, suffix = ''): Promise<BenchDatabase> {
  return createTestDatabase(server, `x_bench${suffix}`);
}
