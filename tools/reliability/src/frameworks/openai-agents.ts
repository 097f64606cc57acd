// The OpenAI Agents SDK runs of the kill scenario: a real agent on the fake model server whose
// tool needs approval, its effect recorded in the side table keyed by the SDK's call id.
import { Agent, OpenAIChatCompletionsModel, setTracingDisabled, tool } from '@openai/agents';
import type { RunKind } from '@x/executive';
import { OPENAI_AGENTS_KIND, openaiAgentsKind } from '@x/openai-agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { type Hook, type OpenedPlace, recordEffect } from './place.js';

// No trace leaves the machine: the SDK would export them to OpenAI.
setTracingDisabled(true);

/** The city of the agent's run number `n`: the model books it, the effect records it. */
export function cityOf(n: number): string {
  return `City${n}`;
}

/**
 * The agent: it books the city it is asked for with `book_trip` (approval needed), whose
 * effect is keyed by the SDK's call id; then it says what the tool answered.
 */
export function bookingAgent(db: OpenedPlace['db'], hook: Hook, modelUrl: string) {
  const bookTrip = tool({
    name: 'book_trip',
    description: 'Books a trip to a city.',
    parameters: z.object({ city: z.string() }),
    needsApproval: true,
    execute: async ({ city }, _context, details) => {
      const key = details?.toolCall?.callId ?? 'no-call-id';
      await recordEffect(db, { key, run: city, value: city });
      await hook(3);
      return `booked ${city}`;
    },
  });
  return new Agent({
    name: 'booker',
    instructions: 'Book the trip the person asks for with book_trip, then confirm it.',
    model: new OpenAIChatCompletionsModel(
      new OpenAI({ baseURL: `${modelUrl}/v1`, apiKey: 'fake' }),
      'fake-model',
    ),
    tools: [bookTrip],
  });
}

/** The kind the worker resumes runs with; point 2 when the restored state is about to run. */
export function workerKind(
  db: OpenedPlace['db'],
  hook: Hook,
  modelUrl: string,
): { name: string; kind: RunKind } {
  const agent = bookingAgent(db, hook, modelUrl);
  return { name: OPENAI_AGENTS_KIND, kind: openaiAgentsKind({ agent, beforeRun: () => hook(2) }) };
}
