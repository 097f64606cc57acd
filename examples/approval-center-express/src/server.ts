// Starts the app: PORT (default 3000), DATABASE_URL for PostgreSQL (default PGlite in
// .state/ of this folder), ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL and MODEL for the agent.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
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
const { app, close } = createApp({
  storage,
  model: anthropicModel(process.env.MODEL ?? 'claude-sonnet-5-5'),
});
const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
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
