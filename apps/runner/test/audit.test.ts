import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { describeAuditFlow } from './audit-flow.js';
import { dataDirs } from './run-cli.js';

const dataDir = dataDirs();

// The embedded default: the data folder's own audit.key, and its PGlite opened directly.
describeAuditFlow(
  'the embedded default',
  async () => {
    const dir = dataDir();
    return {
      args: ['--data', dir],
      env: {},
      async sql(query) {
        // Opened only between commands: one process at a time holds PGlite.
        const db = new PGlite(path.join(dir, 'pglite'));
        try {
          return (await db.query<Record<string, unknown>>(query)).rows;
        } finally {
          await db.close();
        }
      },
      close: async () => {},
    };
  },
  { shareStorage: true },
);
