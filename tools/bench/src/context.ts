import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import type { Budget } from './measure.js';
import type { Row } from './report.js';

/** A drizzle database over postgres.js, typed as the stores take it. */
export type Db = PgDatabase<PgQueryResultHKT, Record<string, unknown>>;

/** The server side of a run: one fresh database, raw and through drizzle. */
export interface Server {
  url: string;
  /** The raw client every floor uses. */
  sql: postgres.Sql;
  /** drizzle over the same client: what the stores use. */
  db: Db;
}

/** What every section gets. */
export interface Context {
  quick: boolean;
  /** The default budget of a subject/floor pair. */
  budget: Budget;
  /** A scratch folder of this run (removed at the end). */
  tmp: string;
  log(line: string): void;
  /** Adds a finished row (judged and printed as it lands). */
  add(row: Row): void;
}
