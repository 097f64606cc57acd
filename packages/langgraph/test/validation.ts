import type { SqlTarget } from '@internal/pg-test';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate, PostgresCheckpointSaver } from '../src/index.js';
import { emptyTables } from './targets.js';

/**
 * Registers LangGraph's own validation suite for the saver on the target `open` gives: one
 * database for the file, migrated once; each saver the suite creates starts on empty tables,
 * as the suite requires (no saver may see another's checkpoints).
 */
export async function validateOn(name: string, open: () => Promise<SqlTarget>): Promise<void> {
  // The suite calls vitest's functions as globals.
  Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
  const { validate } = await import('@langchain/langgraph-checkpoint-validation');
  let target: SqlTarget | undefined;
  validate({
    checkpointerName: name,
    beforeAllTimeout: 60_000,
    async beforeAll() {
      target = await open();
      await migrate(target.db);
    },
    async afterAll() {
      await target?.close();
    },
    async createCheckpointer() {
      if (target === undefined) throw new Error('the target did not open');
      await emptyTables(target.db);
      return new PostgresCheckpointSaver(target.db);
    },
  });
}
