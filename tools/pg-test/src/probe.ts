import postgres from 'postgres';

/** The server the SQL suites use: `TEST_DATABASE_URL`, else the local default. */
export function testServerUrl(): string {
  return process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

let probed: Promise<boolean> | undefined;

/** Whether the test server answers a query (asked once per process). */
export function serverReachable(): Promise<boolean> {
  probed ??= (async () => {
    const sql = postgres(testServerUrl(), { max: 1, connect_timeout: 3, onnotice: () => {} });
    try {
      await sql`select 1`;
      return true;
    } catch {
      return false;
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
    }
  })();
  return probed;
}

/** True when the server suites had to be skipped (never in CI: there they fail instead). */
export async function serverSuitesSkipped(): Promise<boolean> {
  return process.env.CI !== 'true' && !(await serverReachable());
}
