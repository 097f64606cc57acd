import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolUseBlock } from '@x/wire';
import { z } from 'zod';
import { setting, VARIABLES } from '../config/index.js';
import type { ToolSpec } from './model-port.js';

/**
 * Where a gated tool's effect lands, deduplicated by its idempotency key: the first call with
 * a key has the effect, a later one with the same key only counts the invocation. The demo's
 * tools write to the runner's `tool_effects` table; a real tool passes the key to its API.
 */
export interface EffectLog {
  apply(key: string, tool: string, input: unknown): Promise<{ invocations: number }>;
}

/** What a gated tool is given when it runs: the question's token as its idempotency key. */
export interface GatedContext {
  key: string;
  effects: EffectLog;
}

const SendEmailInput = z
  .object({
    to: z.email().describe('The address to send to.'),
    subject: z.string().min(1).max(200),
    body: z.string().max(10_000),
  })
  .strict();

const TransferFundsInput = z
  .object({
    to: z.string().min(1).max(100).describe('The account to pay, e.g. an IBAN.'),
    amount: z.number().positive().max(1_000_000),
    currency: z.enum(['EUR', 'USD', 'GBP']),
    reference: z.string().max(140).optional(),
  })
  .strict();

const gatedTools = {
  send_email: {
    description: 'Sends an email. Runs only once a person approved it (the turn waits for them).',
    input: SendEmailInput,
    run: async (input: z.infer<typeof SendEmailInput>, context: GatedContext) => {
      await context.effects.apply(context.key, 'send_email', input);
      return `email sent to ${input.to}: "${input.subject}" (message ${context.key})`;
    },
  },
  transfer_funds: {
    description:
      'Transfers money to an account. Runs only once a person approved it (the turn waits for them).',
    input: TransferFundsInput,
    run: async (input: z.infer<typeof TransferFundsInput>, context: GatedContext) => {
      await context.effects.apply(context.key, 'transfer_funds', input);
      return `transferred ${input.amount} ${input.currency} to ${input.to} (transfer ${context.key})`;
    },
  },
} as const;

/** A tool that runs only once a person approved its call. */
export type GatedToolName = keyof typeof gatedTools;

/** True for a tool declared as needing approval (`send_email`, `transfer_funds`). */
export function isGatedTool(name: string): name is GatedToolName {
  return Object.hasOwn(gatedTools, name);
}

/** The gated tools as a model is offered them. */
export const gatedToolSpecs: ToolSpec[] = Object.entries(gatedTools).map(([name, tool]) => ({
  name,
  description: tool.description,
  inputSchema: gatedInputSchema(name as GatedToolName),
}));

/** The JSON schema of a gated tool's arguments (what the page validates an edit against). */
export function gatedInputSchema(name: GatedToolName): Record<string, unknown> {
  return z.toJSONSchema(gatedTools[name].input) as Record<string, unknown>;
}

/** A gated call's arguments checked against its tool's schema, or why they do not fit. */
export function gatedArguments(
  name: GatedToolName,
  input: unknown,
): { arguments: Record<string, unknown> } | { error: string } {
  const parsed = gatedTools[name].input.safeParse(input);
  return parsed.success
    ? { arguments: parsed.data as Record<string, unknown> }
    : { error: z.prettifyError(parsed.error) };
}

/**
 * The arguments an accepting answer to a gated call runs with: its content is empty (run the
 * call as the model made it) or the edited arguments as a JSON object, checked against the
 * tool's schema.
 */
export function acceptedArguments(
  name: GatedToolName,
  original: unknown,
  content: string,
): { arguments: Record<string, unknown>; edited: boolean } | { error: string } {
  if (content.trim() === '') {
    const checked = gatedArguments(name, original);
    return 'error' in checked ? checked : { ...checked, edited: false };
  }
  let given: unknown;
  try {
    given = JSON.parse(content);
  } catch {
    return {
      error: `the answer to a ${name} call is its arguments as a JSON object (edited), or empty to run it as asked; got text that is not JSON`,
    };
  }
  const checked = gatedArguments(name, given);
  if ('error' in checked)
    return { error: `the edited arguments of ${name} do not fit its schema: ${checked.error}` };
  const edited = JSON.stringify(checked.arguments) !== JSON.stringify(original);
  return { ...checked, edited };
}

/** Runs an approved gated call with its idempotency key; its effect is the tool's own. */
export async function runGatedTool(
  name: GatedToolName,
  input: Record<string, unknown>,
  context: GatedContext,
): Promise<string> {
  const run = gatedTools[name].run as (i: unknown, c: GatedContext) => Promise<string>;
  const output = await run(input, context);
  // A remote API that answers slowly after its effect landed: where a crash loses the answer.
  const delay = setting(VARIABLES.RUNNER_DEMO_TOOL_DELAY_MS);
  if (delay > 0) await sleep(delay);
  return output;
}

/**
 * The tool result the model reads after an approved call ran: the tool's result, and when the
 * person changed the arguments, that they did and which arguments ran.
 */
export function ranResult(
  name: GatedToolName,
  input: Record<string, unknown>,
  edited: boolean,
  output: string,
): string {
  if (!edited) return output;
  return `The person changed the arguments before approving; ${name} ran with ${JSON.stringify(input)}. Result: ${output}`;
}

/** The question text of a gated call: the call and its arguments. */
export function gatedQuestionText(use: ToolUseBlock): string {
  return `Approve ${use.name} ${JSON.stringify(use.input)}?`;
}
