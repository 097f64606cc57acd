import Anthropic from '@anthropic-ai/sdk';
import {
  type FlowContext,
  type GatedTools,
  type Model,
  recordStart,
  runTurn,
  TURN_KIND,
  turnKind,
} from '@x/executive';
import { fromAnthropicMessage, toAnthropicMessages, userMessage } from '@x/wire';
import { z } from 'zod';

/** The agent's instructions: it books trips, and booking waits for a person's approval. */
const system = 'You book trips with book_trip. A person approves each booking first.';

/** The agent's one tool, gated: it runs only once a person approved the call on the page. */
export const gated: GatedTools = {
  book_trip: {
    description: 'Books a trip to a city.',
    input: z.object({ city: z.string().min(1) }),
    async run(input, { key, effects }) {
      const { city } = input as { city: string };
      // The question's token keys the booking: a retried resume books once.
      await effects.apply(key, 'book_trip', { city });
      return `booked ${city}`;
    },
  },
};

/**
 * The executive's model port over the Anthropic SDK (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL):
 * one call, the reply read back as a wire message.
 */
export function anthropicModel(id: string): Model {
  let client: Anthropic | undefined;
  return {
    id,
    async generate({ system, messages, tools, signal }) {
      client ??= new Anthropic();
      const response = await client.messages.create(
        {
          model: id,
          max_tokens: 1024,
          system,
          tools: tools.map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: { type: 'object', ...t.inputSchema },
          })),
          // A call that waits for a person must be the turn's only call.
          tool_choice: { type: 'auto', disable_parallel_tool_use: true },
          messages: toAnthropicMessages(messages),
        },
        signal ? { signal } : {},
      );
      return fromAnthropicMessage(response);
    },
  };
}

/** The run kind the app's worker resumes its runs with: the package's turn loop, this agent. */
export const agentKinds = (model: Model) => ({
  [TURN_KIND]: turnKind({ modelFor: () => model, system, tools: {}, gated }),
});

/**
 * Starts a run for `requester`: the agent's first turn, until it asks for approval (the run
 * then waits on the page) or ends.
 */
export async function startRun(
  flow: FlowContext,
  model: Model,
  request: string,
  requester: string,
): Promise<{ runId: string; status: string }> {
  const run = { runId: crypto.randomUUID(), conversationId: crypto.randomUUID(), requester };
  const turn = await runTurn(
    model,
    [userMessage(request)],
    { event() {} },
    { system, gated, tools: {} },
  );
  const started = await recordStart(flow, run, model, turn, { model: model.id, requester });
  return { runId: run.runId, status: started.status };
}
