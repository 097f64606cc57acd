import type { EffectLog } from '@x/executive';
import { type StoreDatabase as Db, rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';

/**
 * The demo tools' own effects (`runner.tool_effects`), deduplicated by idempotency key: the
 * effect log the runner's gated tools write to. The results of gated calls are the
 * executive's (`gatedResults` of the storage).
 */
export class ToolEffects implements EffectLog {
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
}
