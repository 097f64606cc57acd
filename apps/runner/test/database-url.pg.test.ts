import { serverForTests } from '@internal/pg-test';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

// The same refusals against the real server: what a person types about TLS and the database
// name is answered in words that say what to change.

const server = await serverForTests();

async function offersTls(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ ssl: string }[]>`show ssl`;
    return row?.ssl === 'on';
  } finally {
    await sql.end({ timeout: 1 });
  }
}

describe.skipIf(!server)('DATABASE_URL against PostgreSQL', { timeout: 120_000 }, () => {
  it('sslmode=require against a server without TLS says the server does not support TLS', async (t) => {
    if (await offersTls(server as string))
      t.skip('the test server offers TLS: this case needs one without');
    const url = new URL(server as string);
    url.searchParams.set('sslmode', 'require');
    const result = await runCli(['runs'], { env: { DATABASE_URL: url.toString() } });
    expect(result.code).toBe(4);
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      `error: cannot use PostgreSQL at postgres://${url.host}${url.pathname}: the server does not support TLS, which sslmode=require asks for (drop sslmode from the URL, or turn on ssl in the server)`,
    ]);
  });

  it('a URL with the server but no database is refused before any migration runs there', async () => {
    const url = new URL(server as string);
    url.pathname = '/';
    const result = await runCli(['migrate'], { env: { DATABASE_URL: url.toString() } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`names no database`);
  });
});
