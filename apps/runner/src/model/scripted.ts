import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  declineIn,
  isGatedTool,
  isHumanTool,
  type Model,
  type ModelRequest,
  WORKER_SYSTEM_PROMPT,
} from '@x/executive';
import type {
  AssistantBlock,
  AssistantMessage,
  JsonValue,
  Message,
  ToolResultBlock,
} from '@x/wire';
import { JsonValueSchema, textOf, toolUses } from '@x/wire';
import { z } from 'zod';
import { setting, VARIABLES } from '../config/index.js';
import { demoGatedTools } from '../demo/tools.js';
import { ModelError, usageError } from '../errors.js';

const ToolCallSchema = z.object({ name: z.string().min(1), input: JsonValueSchema });
const StepBaseSchema = z.object({
  text: z.string().optional(),
  tools: z.array(ToolCallSchema).optional(),
});
const StepSchema = StepBaseSchema.extend({ ifDeclined: StepBaseSchema.optional() });
const ScenarioSchema = z.object({
  description: z.string(),
  steps: z.array(StepSchema).min(1),
  /** The steps of worker sub-agents (`delegate`): the first whose `task` its sub-task contains. */
  workers: z
    .array(z.object({ task: z.string().min(1), steps: z.array(StepSchema).min(1) }))
    .optional(),
});

/** A scripted conversation: the assistant's steps, one per model call. */
export type Scenario = z.infer<typeof ScenarioSchema>;
type Step = z.infer<typeof StepBaseSchema>;

const scenarioDir = new URL('../../scenarios/', import.meta.url);

/** Loads `scenarios/NAME.json` shipped with the runner. */
export function loadScenario(name: string): Scenario {
  const known =
    'known: scripted:trip, scripted:tools, scripted:siblings, scripted:team, scripted:payment, scripted:gated';
  if (!/^[a-z0-9-]+$/.test(name)) throw usageError(`unknown scenario "${name}" (${known})`);
  let text: string;
  try {
    text = readFileSync(new URL(`${name}.json`, scenarioDir), 'utf8');
  } catch {
    throw usageError(`unknown scenario "${name}" (${known})`);
  }
  return ScenarioSchema.parse(JSON.parse(text));
}

function resultText(block: ToolResultBlock): string {
  if (typeof block.content === 'string') return block.content;
  return (block.content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** What the current turn holds: the goal, tool results in order, and the human answers. */
function turnState(messages: readonly Message[]) {
  // The turn starts at the last user message that is not only tool results.
  let start = 0;
  messages.forEach((message, i) => {
    if (message.role === 'user' && message.content.some((b) => b.type !== 'tool_result')) start = i;
  });
  const first = messages[start];
  const goal = first ? textOf(first) : '';
  const names = new Map<string, string>();
  const results: string[] = [];
  const answers: string[] = [];
  let steps = 0;
  for (const message of messages.slice(start)) {
    if (message.role === 'assistant') {
      steps++;
      for (const use of toolUses(message)) names.set(use.id, use.name);
      continue;
    }
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const text = resultText(block);
      results.push(text);
      const name = names.get(block.tool_use_id);
      if (name && (isHumanTool(name) || isGatedTool(demoGatedTools, name)) && !block.is_error)
        answers.push(text);
    }
  }
  return { goal, steps, results, answers };
}

function fill(template: string, state: ReturnType<typeof turnState>): string {
  // The invoice a payment scenario handles is the one the goal names, as a model would read it.
  const invoice = /\d+/.exec(state.goal)?.[0] ?? '42';
  const filled = template.replaceAll('{{invoice}}', invoice);
  return filled.replace(/\{\{(answer|result)(?::(\d+))?\}\}/g, (_, kind: string, n?: string) => {
    const list = kind === 'answer' ? state.answers : state.results;
    const value = n ? list[Number(n) - 1] : list[list.length - 1];
    return value ?? '';
  });
}

function fillJson(value: JsonValue, state: ReturnType<typeof turnState>): JsonValue {
  if (typeof value === 'string') return fill(value, state);
  if (Array.isArray(value)) return value.map((v) => fillJson(v, state));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillJson(v, state)]));
  }
  return value;
}

/** What the scripted model says to a decline its scenario did not plan for. */
function acknowledgeDecline({ by, reason }: NonNullable<ReturnType<typeof declineIn>>): string {
  const quoted = reason ? ` ("${reason}")` : '';
  const what =
    by === 'person'
      ? `Understood, you declined${quoted}`
      : `Nobody answered before the deadline, so its default decline${quoted} stands`;
  return `${what}: I stop here. Tell me what you would like instead.`;
}

let failedCalls = 0;

/**
 * A deterministic model that plays a scenario: the Nth model call of a turn returns the
 * Nth step, with `{{answer}}`, `{{answer:N}}` and `{{result:N}}` filled from the turn's
 * tool results and `{{invoice}}` from its goal (its first number, or 42). No network, no key.
 */
export class ScriptedModel implements Model {
  readonly id: string;
  readonly #scenario: Scenario;

  constructor(name: string, scenario: Scenario = loadScenario(name)) {
    this.id = `scripted:${name}`;
    this.#scenario = scenario;
  }

  async generate(request: ModelRequest): Promise<AssistantMessage> {
    // Simulated model latency, for demos and for tests that stop a process mid-call.
    const delay = setting(VARIABLES.RUNNER_SCRIPTED_DELAY_MS);
    if (delay > 0) await sleep(delay, undefined, { signal: request.signal });
    // Simulated outages: the first N calls of this process fail as a 503 would.
    if (failedCalls < setting(VARIABLES.RUNNER_SCRIPTED_FAIL)) {
      failedCalls++;
      throw new ModelError(
        'unavailable',
        '[scripted] 503 simulated outage (RUNNER_SCRIPTED_FAIL)',
        { retryable: true },
      );
    }
    const state = turnState(request.messages);
    const steps = this.#stepsFor(request);
    const step = steps[Math.min(state.steps, steps.length - 1)] as (typeof steps)[number];
    const lastAnswer = state.answers[state.answers.length - 1] ?? '';
    const decline = state.results.at(-1) === lastAnswer ? declineIn(lastAnswer) : undefined;
    // A decline (a person's, or a deadline's default) is never pasted into the script as if
    // it were an answer: a step without its own `ifDeclined` acknowledges it and ends the turn.
    const chosen: Step = !decline
      ? step
      : (step.ifDeclined ?? { text: acknowledgeDecline(decline) });
    const content: AssistantBlock[] = [];
    if (chosen.text) {
      const text = fill(chosen.text, state);
      // Stream it word by word, as a real model would.
      for (const piece of text.match(/\S+\s*/g) ?? []) request.onText?.(piece);
      content.push({ type: 'text', text });
    }
    for (const call of chosen.tools ?? []) {
      content.push({
        type: 'tool_use',
        id: `toolu_${randomUUID().replaceAll('-', '').slice(0, 20)}`,
        name: call.name,
        input: fillJson(call.input, state),
      });
    }
    return { role: 'assistant', content };
  }

  // A worker plays the steps of its sub-task; the parent agent plays the scenario's own.
  #stepsFor(request: ModelRequest): Scenario['steps'] {
    if (request.system !== WORKER_SYSTEM_PROMPT) return this.#scenario.steps;
    const first = request.messages[0];
    const task = first ? textOf(first) : '';
    const worker = this.#scenario.workers?.find((w) =>
      task.toLowerCase().includes(w.task.toLowerCase()),
    );
    return worker?.steps ?? [{ text: `Done: ${task}` }];
  }
}
