import { createTestDatabase, serverForTests } from '@internal/pg-test';
import { dataDirs } from './serve-harness.js';

/** Where a test keeps the runner's state, as the CLI and serve are pointed at it. */
export interface Where {
  /** `--data DIR` on the embedded default; none on PostgreSQL. */
  args: string[];
  /** `DATABASE_URL` (and the extra settings given) on PostgreSQL. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** One backing a test file runs its cases on; `skip` without a PostgreSQL test server. */
export interface Target {
  name: 'embedded' | 'postgres';
  skip: boolean;
  setUp(): Promise<Where>;
}

/**
 * The embedded default (a fresh data folder) and PostgreSQL (a database of its own on the
 * test server, with `postgresEnv` beside DATABASE_URL), for a file that runs its cases on both.
 */
export async function storageTargets(postgresEnv: Record<string, string> = {}): Promise<Target[]> {
  const server = await serverForTests();
  const newDataDir = dataDirs();
  return [
    {
      name: 'embedded',
      skip: false,
      setUp: async () => ({ args: ['--data', newDataDir()], env: {}, drop: async () => {} }),
    },
    {
      name: 'postgres',
      skip: !server,
      setUp: async () => {
        const database = await createTestDatabase(server as string);
        return {
          args: [],
          env: { DATABASE_URL: database.url, ...postgresEnv },
          drop: () => database.drop(),
        };
      },
    },
  ];
}
