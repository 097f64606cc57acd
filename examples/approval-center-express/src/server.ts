// Starts the app: PORT (default 3000), DATABASE_URL for PostgreSQL (default PGlite in
// .state/ of this folder), ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL and MODEL for the agent;
// OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_ROLE_MAP (`group=role,...`) for an OpenID provider.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Oidc } from '@x/approval-center';
import { migrate, sqlExecutiveStorage } from '@x/executive';
import { drizzle as pgliteDrizzle } from 'drizzle-orm/pglite';
import { drizzle as postgresDrizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { anthropicModel } from './agent.js';
import { createApp } from './app.js';

const url = process.env.DATABASE_URL;
let closeDatabase: () => Promise<void>;
let db: Parameters<typeof sqlExecutiveStorage>[0];
if (url) {
  const sql = postgres(url, { onnotice: () => {} });
  db = postgresDrizzle({ client: sql });
  closeDatabase = () => sql.end();
} else {
  const dir = process.env.STATE_DIR ?? '.state';
  mkdirSync(dir, { recursive: true });
  const pglite = new PGlite(join(dir, 'pglite'));
  db = pgliteDrizzle({ client: pglite });
  closeDatabase = () => pglite.close();
}
await migrate(db);
// PGlite has no WAL writer to flush an asynchronous claim soon after: claims commit durably there.
const storage = sqlExecutiveStorage(db, { queue: { synchronousClaim: !url } });
const port = Number(process.env.PORT ?? 3000);
const issuer = process.env.OIDC_ISSUER;
const roleMap = Object.fromEntries(
  (process.env.OIDC_ROLE_MAP ?? '').split(',').flatMap((pair) => {
    const [group, role] = pair.split('=');
    return group && role ? [[group, [role]]] : [];
  }),
);
const oidc = issuer
  ? await Oidc.discover({ issuer, clientId: process.env.OIDC_CLIENT_ID, roleMap })
  : undefined;
const { app, close } = createApp({
  storage,
  model: anthropicModel(process.env.MODEL ?? 'claude-sonnet-5-5'),
  oidc: oidc && { oidc, publicUrl: process.env.PUBLIC_URL ?? `http://127.0.0.1:${port}` },
});
const server = app.listen(port, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  console.log(`app at http://127.0.0.1:${port}/ (approvals at /approvals/)`);
});
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
async function stop() {
  server.close();
  await close();
  await closeDatabase();
}
