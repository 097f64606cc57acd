import { createTestDatabase, serverProblem, testServerUrl } from '@internal/pg-test';
import postgres from 'postgres';

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
