// The AI SDK loop of the ai-sdk kill scenario, shared by the scenario (which starts runs) and
// its worker child (which resumes them): one tool that needs approval, whose outside effect is
// a row keyed by the AI SDK's tool call id, counting its invocations.
import { createAnthropic } from '@ai-sdk/anthropic';
import type { AiSdkTurnSettings } from '@x/ai-sdk';
import { stepCountIs, tool } from 'ai';
import type postgres from 'postgres';
import { z } from 'zod';

/** The table of the tool's effects: one row per call id, with how often `execute` ran. */
export const EFFECTS_TABLE = 'rel_ai_sdk_effects';

/** Where in a resume the worker dies, in the order a resume passes them. */
export const KILL_POINTS = [
  'claimed',
  'effect',
  'model-called',
  'model-answered',
  'written',
] as const;
export type KillPoint = (typeof KILL_POINTS)[number];

/** The table of the worker's kills: the run each one cut, and where. */
export const KILLS_TABLE = 'rel_ai_sdk_kills';

/** Creates {@link EFFECTS_TABLE} and {@link KILLS_TABLE}. */
export async function createScenarioTables(sql: postgres.Sql): Promise<void> {
  await sql`create table ${sql(EFFECTS_TABLE)} (
    call_id text primary key, amount int not null, invocations int not null)`;
  await sql`create table ${sql(KILLS_TABLE)} (run_id text not null, point text not null)`;
}

/**
 * The loop's settings against the model server `url`; `afterEffect` runs once the tool's
 * effect committed (the worker child dies there at one of its kill points).
 */
export function payingSettings(
  url: string,
  sql: postgres.Sql,
  afterEffect: () => Promise<void> = async () => {},
  fetch?: typeof globalThis.fetch,
): AiSdkTurnSettings {
  const anthropic = createAnthropic({ baseURL: url, apiKey: 'fake', ...(fetch ? { fetch } : {}) });
  const pay = tool({
    description: 'Pays an amount',
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }, { toolCallId }) => {
      await sql`insert into ${sql(EFFECTS_TABLE)} (call_id, amount, invocations)
        values (${toolCallId}, ${amount}, 1)
        on conflict (call_id) do update set invocations = ${sql(EFFECTS_TABLE)}.invocations + 1`;
      await afterEffect();
      return `paid ${amount}`;
    },
  });
  return {
    model: anthropic('fake'),
    system: 'Pay what you are asked to pay.',
    tools: { pay },
    stopWhen: stepCountIs(5),
    maxOutputTokens: 1024,
    providerOptions: { anthropic: { disableParallelToolUse: true } },
  };
}
