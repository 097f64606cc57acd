import type { EffectLog, GatedResult, GatedResults } from '@x/executive';
import { type StoreDatabase as Db, rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';

/**
 * The runner's tables of gated calls: `gated_results`, the result of each approved call,
 * recorded before the model sees it (keyed by the question's token), and `tool_effects`, the
 * demo tools' own effects, deduplicated by idempotency key.
 */
export class GatedCalls implements EffectLog, GatedResults {
  constructor(private readonly db: Db) {}

  /** Records an effect once per key; a repeated key only counts the invocation. */
  async apply(key: string, tool: string, input: unknown): Promise<{ invocations: number }> {
    const [row] = rowsOf(
      await this.db.execute(sql`insert into runner.tool_effects (key, tool, arguments)
        values (${key}, ${tool}, ${JSON.stringify(input)}::jsonb)
        on conflict (key) do update set invocations = runner.tool_effects.invocations + 1
        returning invocations`),
    );
    return { invocations: Number(row?.invocations) };
  }

  /** The recorded result of the gated call asked by `token`, if it ran. */
  async result(token: string): Promise<GatedResult | undefined> {
    const [row] = rowsOf(
      await this.db.execute(
        sql`select token, tool, arguments, edited, result from runner.gated_results where token = ${token}`,
      ),
    );
    return row && resultOf(row);
  }

  /** Records a result unless one is recorded already; returns the one that stands. */
  async record(given: GatedResult): Promise<GatedResult> {
    await this.db.execute(sql`insert into runner.gated_results (token, tool, arguments, edited, result)
      values (${given.token}, ${given.tool}, ${JSON.stringify(given.arguments)}::jsonb, ${given.edited}, ${given.result})
      on conflict (token) do nothing`);
    return (await this.result(given.token)) ?? given;
  }

  /** Every effect, oldest first: what the demo's tools did, with how often each was invoked. */
  async effects(): Promise<
    Array<{ key: string; tool: string; arguments: unknown; invocations: number }>
  > {
    return rowsOf(
      await this.db.execute(
        sql`select key, tool, arguments, invocations from runner.tool_effects order by created_at, key`,
      ),
    ).map((r) => ({
      key: String(r.key),
      tool: String(r.tool),
      arguments: json(r.arguments),
      invocations: Number(r.invocations),
    }));
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
