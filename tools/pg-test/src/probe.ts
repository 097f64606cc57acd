import postgres from 'postgres';

/** The server the SQL suites use: `TEST_DATABASE_URL`, else the local default. */
export function testServerUrl(): string {
  return process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

/**
 * Why the server at `url` cannot be used, or undefined when it answers a query. A server
 * that is there but slow or full (a timeout, too many clients) is asked up to three times,
 * so a busy moment does not turn its suites into skips; a refused connection is final.
 */
export async function serverProblem(url = testServerUrl()): Promise<string | undefined> {
  for (let attempt = 1; ; attempt++) {
    const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
    try {
      await sql`select 1`;
      return undefined;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const final = attempt >= 3 || code === 'ECONNREFUSED' || code === 'ENOTFOUND';
      if (final) return error instanceof Error ? error.message : String(error);
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

let probed: Promise<boolean> | undefined;

/** Whether the test server answers a query (asked once per process). */
export function serverReachable(): Promise<boolean> {
  probed ??= serverProblem().then((problem) => problem === undefined);
  return probed;
}

/** True when the server suites had to be skipped (never in CI: there they fail instead). */
export async function serverSuitesSkipped(): Promise<boolean> {
  return process.env.CI !== 'true' && !(await serverReachable());
}
