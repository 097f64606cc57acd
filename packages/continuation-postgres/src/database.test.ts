import type { PgTransaction } from 'drizzle-orm/pg-core';
import type { PgliteDatabase, PgliteQueryResultHKT } from 'drizzle-orm/pglite';
import type { PostgresJsDatabase, PostgresJsQueryResultHKT } from 'drizzle-orm/postgres-js';
import { describe, expectTypeOf, it } from 'vitest';
import type { ContinuationDatabase } from './database.js';
import type { suspensions } from './schema.js';

// Checked by `tsc` (typecheck), which is where a driver's type drifting away would show.
describe('ContinuationDatabase', () => {
  it('accepts postgres.js and PGlite databases, with or without a schema, and transactions', () => {
    expectTypeOf<PostgresJsDatabase>().toExtend<ContinuationDatabase>();
    expectTypeOf<PgliteDatabase>().toExtend<ContinuationDatabase>();
    expectTypeOf<
      PostgresJsDatabase<{ suspensions: typeof suspensions }>
    >().toExtend<ContinuationDatabase>();
    expectTypeOf<PgTransaction<PostgresJsQueryResultHKT>>().toExtend<ContinuationDatabase>();
    expectTypeOf<PgTransaction<PgliteQueryResultHKT>>().toExtend<ContinuationDatabase>();
  });
});
