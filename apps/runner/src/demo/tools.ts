import { setTimeout as sleep } from 'node:timers/promises';
import {
  type GatedContext,
  type GatedTool,
  type GatedTools,
  humanToolSpecs,
  type OrdinaryTool,
  type OrdinaryTools,
  type ToolContext,
  type ToolSpec,
  toolSpecsOf,
  type WorkerOptions,
} from '@x/executive';
import { z } from 'zod';
import { type Env, setting, VARIABLES } from '../config/index.js';

/** The system prompt every model gets. */
export const SYSTEM_PROMPT = `You are a careful assistant. When you need something from the person, call ask_user; before an action with cost or side effects, call approve. Call either of them alone in a message, never next to other tool calls.`;

const TodoInput = z.object({
  id: z.string().min(1),
  content: z.string(),
  status: z.enum(['pending', 'in_progress', 'completed']),
});

/** Keeps each tool's input type checked against its own schema. */
function ordinary<Input>(tool: OrdinaryTool<Input>): OrdinaryTool {
  return tool as OrdinaryTool;
}

/** The demo's ordinary tools: deterministic, so scripted runs and tests are repeatable. */
export const demoTools: OrdinaryTools = {
  get_weather: ordinary({
    description: 'Current weather for a city.',
    input: z.object({ city: z.string().min(1) }),
    run: ({ city }) => {
      const seed = [...city].reduce((sum, c) => sum + c.charCodeAt(0), 0);
      const sky = ['sunny', 'cloudy', 'light rain', 'clear'][seed % 4];
      return `${sky}, ${12 + (seed % 15)}°C`;
    },
  }),
  add: ordinary({
    description: 'Adds numbers.',
    input: z.object({ numbers: z.array(z.number()).min(1) }),
    run: ({ numbers }) => String(numbers.reduce((a, b) => a + b, 0)),
  }),
  update_plan: ordinary({
    description: 'Replaces the plan: the list of todos and their status.',
    input: z.object({ todos: z.array(TodoInput) }),
    run: ({ todos }, context: ToolContext) => {
      context.planUpdated(todos);
      return `plan updated: ${todos.filter((t) => t.status === 'completed').length}/${todos.length} done`;
    },
  }),
};

/** What every agent of the demo is offered (the parent also gets `delegate`). */
export const toolSpecs: ToolSpec[] = [...humanToolSpecs, ...toolSpecsOf(demoTools)];

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

/** Keeps each gated tool's input type checked against its own schema. */
function gated<Input>(tool: GatedTool<Input>): GatedTool {
  return tool as GatedTool;
}

/** A remote API that answers slowly after its effect landed: where a crash loses the answer. */
async function answeredSlowly(output: string): Promise<string> {
  const delay = setting(VARIABLES.RUNNER_DEMO_TOOL_DELAY_MS);
  if (delay > 0) await sleep(delay);
  return output;
}

/** The demo's gated tools: their effects land in the runner's `tool_effects` table. */
export const demoGatedTools: GatedTools = {
  send_email: gated({
    description: 'Sends an email. Runs only once a person approved it (the turn waits for them).',
    input: SendEmailInput,
    run: async (input, context: GatedContext) => {
      await context.effects.apply(context.key, 'send_email', input);
      return answeredSlowly(
        `email sent to ${input.to}: "${input.subject}" (message ${context.key})`,
      );
    },
  }),
  transfer_funds: gated({
    description:
      'Transfers money to an account. Runs only once a person approved it (the turn waits for them).',
    input: TransferFundsInput,
    run: async (input, context: GatedContext) => {
      await context.effects.apply(context.key, 'transfer_funds', input);
      return answeredSlowly(
        `transferred ${input.amount} ${input.currency} to ${input.to} (transfer ${context.key})`,
      );
    },
  }),
};

/** How many workers of one call run at once: RUNNER_WORKER_CONCURRENCY, default 2. */
export function workerConcurrency(env?: Env): number {
  return setting(VARIABLES.RUNNER_WORKER_CONCURRENCY, env);
}

/** The demo's worker sub-agents: the demo tools, RUNNER_WORKER_CONCURRENCY at once. */
export function demoWorkers(env?: Env): WorkerOptions {
  return { tools: demoTools, workerConcurrency: workerConcurrency(env) };
}
