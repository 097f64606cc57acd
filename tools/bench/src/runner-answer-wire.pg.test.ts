import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, serverForTests } from '@internal/pg-test';
import { afterAll, describe, expect, it } from 'vitest';
import { countRunnerAnswers } from './bench-audit-runner.js';

const server = await serverForTests();

describe.skipIf(!server)('the runner’s answer on the wire', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'bench-answer-wire-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('takes as many round trips with the audit log as without: the entry goes with markReady and COMMIT', async () => {
    const database = await createTestDatabase(server as string);
    try {
      const n = 10;
      const { plain, audited } = await countRunnerAnswers(scratch, database.url, n);
      // One statement more for each entry (its insert moves its chain's head as well).
      expect(audited.statements - plain.statements).toBe(n);
      expect(audited.writing).toBe(n);
      expect([audited.transactions, plain.transactions]).toEqual([n, n]);
      expect(audited.roundTrips).toBe(plain.roundTrips);
      // The transaction's two flights: no read of the question comes before the answer.
      expect(plain.roundTrips).toBe(2 * n);
    } finally {
      await database.drop();
    }
  });
});
