import { describe, it } from 'vitest';
import { restartAcrossDeadline } from './deadline-flow.js';
import { storageTargets } from './storage-targets.js';

// RUNNER_DEADLINE on PostgreSQL: the run's due time in the database keeps the deadline across
// a restart of wake, as the data folder does (deadline.slow.test.ts).

const AUDIT_KEY = { RUNNER_AUDIT_KEY: 'the deadline tests key, 16+ bytes' };
const postgres = (await storageTargets(AUDIT_KEY)).find((t) => t.name === 'postgres');

describe.skipIf(!postgres || postgres.skip)(
  'deadlines through wake (PostgreSQL)',
  {
    timeout: 300_000,
  },
  () => {
    it('a wake stopped before the deadline and started after it applies it once; a late answer is exit 7', async () => {
      const where = await (postgres as NonNullable<typeof postgres>).setUp();
      try {
        await restartAcrossDeadline(where);
      } finally {
        await where.drop();
      }
    });
  },
);
