import { tripBooker } from './booking.js';
import { paymentsAgent } from './payments.js';
import { tripPlanner } from './trip.js';
import type { Script } from './turn.js';

/** A script the command-line server can serve, by name, with the examples that use it. */
export interface NamedScript {
  script: Script;
  /** One line for `--help`: what the model does and which examples it is for. */
  summary: string;
}

/** The scripts `fake-llm --script NAME` serves; `trip` is the default. */
export const namedScripts = {
  trip: {
    script: tripPlanner,
    summary:
      'asks where to go (ask_user), then book_trip / get_weather, then sums up: langgraph, anthropic-sdk, openai-sdk, ai-sdk, the runner',
  },
  booking: {
    script: tripBooker,
    summary:
      'calls book_trip for the city in the first message, then confirms: openai-agents, ai-sdk-approvals',
  },
  payments: {
    script: paymentsAgent,
    summary:
      'calls pay four times (20, 500, 5000 EUR, then a payee off the list), retries a declined one once, then lists the results: payments-policy',
  },
} satisfies Record<string, NamedScript>;

export type ScriptName = keyof typeof namedScripts;

/** Whether `name` is one of {@link namedScripts}. */
export function isScriptName(name: string): name is ScriptName {
  return Object.hasOwn(namedScripts, name);
}
