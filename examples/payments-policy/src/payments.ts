// What every command of the example shares: the model, the `pay` tool, the policies and the storage.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { PGlite } from '@electric-sql/pglite';
import {
  type EffectLog,
  type GatedTool,
  type GatedTools,
  type Model,
  migrate,
  policyToolsOf,
  sqlExecutiveStorage,
} from '@x/executive';
import { loadPolicySet, type PolicySet, readPolicySources } from '@x/policy';
import { fromAnthropicMessage, toAnthropicMessages } from '@x/wire';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { z } from 'zod';

// Made on the first model call: answering and the policy commands need no key.
let client: Anthropic | undefined; // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
const modelId = process.env.MODEL ?? 'claude-sonnet-5-5';
/** The executive's model port over the Anthropic SDK: one call, the reply read back as a wire message. */
export const model: Model = {
  id: modelId,
  async generate({ system, messages, tools, signal }) {
    client ??= new Anthropic();
    const response = await client.messages.create(
      {
        model: modelId,
        max_tokens: 1024,
        system,
        tools: tools.map((t) => ({
          name: t.name,
          description: t.description,
          input_schema: { type: 'object', ...t.inputSchema },
        })),
        tool_choice: { type: 'auto', disable_parallel_tool_use: true }, // a gated call waits alone
        messages: toAnthropicMessages(messages),
      },
      signal ? { signal } : {},
    );
    return fromAnthropicMessage(response);
  },
};

export const system =
  'You pay suppliers with the pay tool, one payment per call. When a payment is refused, tell the person why.';

/** Who asks for the payments: the policies' principal, barred from answering where a rule says so. */
export const REQUESTER = 'ada';

/** The operators who may answer, with their roles (a real app signs them in). */
export const OPERATORS: Readonly<Record<string, string[]>> = {
  ada: ['finance'],
  bob: ['finance'],
  carol: ['finance'],
  dave: ['sales'],
};

const dir = process.env.STATE_DIR ?? '.state';
mkdirSync(dir, { recursive: true });
const ledger = join(dir, 'payments.log');

/** Where payments land: one line per idempotency key, however often a call is retried. */
const effects: EffectLog = {
  async apply(key, _tool, input) {
    const seen = readLedger().filter((line) => line.startsWith(`${key} `)).length;
    if (seen === 0) appendFileSync(ledger, `${key} ${JSON.stringify(input)}\n`);
    return { invocations: seen + 1 };
  },
};

/** The payments made so far, one line each: the idempotency key and the arguments. */
export function readLedger(): string[] {
  try {
    return readFileSync(ledger, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const PayInput = z
  .object({
    payee: z.string().min(1).max(100).describe('Who is paid: a supplier on the list.'),
    amount: z.number().int().positive().max(1_000_000),
    currency: z.enum(['EUR', 'USD', 'GBP']),
  })
  .strict();

const pay: GatedTool<z.infer<typeof PayInput>> = {
  description: 'Pays a supplier. The policies decide: run at once, ask finance, or refuse.',
  input: PayInput,
  run: async (input, context) => {
    await context.effects.apply(context.key, 'pay', input);
    return `paid ${input.amount} ${input.currency} to ${input.payee}`;
  },
};
/** The gated `pay` tool: what the policies do not allow outright waits for finance. */
export const gated: GatedTools = { pay: pay as GatedTool };
export const effectLog = (): EffectLog => effects;

/** The Cedar files of `paths` over the turn's tools (`pay`, `ask_user`, `approve`). */
export async function policiesOf(paths: readonly string[]): Promise<PolicySet> {
  return loadPolicySet({ tools: policyToolsOf(gated), sources: await readPolicySources(paths) });
}

/**
 * The runs, questions, continuations and policy decisions: in PostgreSQL at DATABASE_URL,
 * else in PGlite in the state folder.
 */
export async function openStorage() {
  const url = process.env.DATABASE_URL;
  const opened = url
    ? (() => {
        const sql = postgres(url, { max: 2, onnotice: () => {} });
        return { db: drizzlePostgres({ client: sql }), close: () => sql.end() };
      })()
    : (() => {
        const pglite = new PGlite(join(dir, 'pglite'));
        return { db: drizzlePglite({ client: pglite }), close: () => pglite.close() };
      })();
  await migrate(opened.db);
  const storage = sqlExecutiveStorage(opened.db, { queue: { synchronousClaim: true } });
  return { storage, db: opened.db, close: opened.close };
}
