import { rowsOf, type StoreDatabase } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import type { GatedResult, GatedResults } from './gated-call.js';

/**
 * The recorded results of approved gated calls in `x_executive.gated_results` (which
 * `migrate` creates), keyed by the question's token: the first record stands. Over a database
 * or a transaction handle, so a record can commit with the lease check that fences it.
 */
export class PostgresGatedResults implements GatedResults {
  constructor(private readonly db: StoreDatabase) {}

  /** The recorded result of the gated call asked by `token`, if it ran. */
  async result(token: string): Promise<GatedResult | undefined> {
    const [row] = rowsOf(
      await this.db.execute(
        sql`select token, tool, arguments, edited, result from x_executive.gated_results where token = ${token}`,
      ),
    );
    return row && resultOf(row);
  }

  /** Records a result unless one is recorded already; returns the one that stands. */
  async record(given: GatedResult): Promise<GatedResult> {
    await this.db.execute(sql`insert into x_executive.gated_results (token, tool, arguments, edited, result)
      values (${given.token}, ${given.tool}, ${JSON.stringify(given.arguments)}::jsonb, ${given.edited}, ${given.result})
      on conflict (token) do nothing`);
    return (await this.result(given.token)) ?? given;
  }
}

const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

function resultOf(row: Record<string, unknown>): GatedResult {
  return {
    token: String(row.token),
    tool: String(row.tool),
    arguments: json(row.arguments) as Record<string, unknown>,
    edited: row.edited === true || row.edited === 't',
    result: String(row.result),
  };
}
