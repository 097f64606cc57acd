import { createHash, randomUUID } from 'node:crypto';
import type { Agent, RunState, RunToolApprovalItem } from '@openai/agents';
import type { Suspension } from '@x/continuation';
import {
  type ExecutiveDatabase,
  type FlowContext,
  kindStopOf,
  NO_QUESTION_POLICY,
  type QuestionPolicy,
  questionAnswerers,
  questionEvent,
  saveKindStop,
} from '@x/executive';
import type { JsonValue } from '@x/wire';

/** The run kind of an OpenAI Agents SDK run (its `meta.kind`). */
export const OPENAI_AGENTS_KIND = 'openai-agents';

/** The format version of the continuation this package writes. */
export const STOP_VERSION = 1;

/** The tool use a stop's continuation is suspended on; its input is the stop. */
const STOP_TOOL = 'openai_agents_run';

/** One interruption of a stop: its question and the SDK's tool call. */
export interface StopQuestion {
  /** The question's token. */
  token: string;
  callId: string;
  tool: string;
  /** The call's arguments as the model gave them (JSON text). */
  arguments: string;
}

/** What a stop's continuation keeps: the serialized `RunState` and its questions. */
export interface Stop {
  version: typeof STOP_VERSION;
  /** `state.toString()`, kept server-side: never taken from a client. */
  state: string;
  questions: StopQuestion[];
}

/** The run a stop belongs to, and the person it acts for, if named. */
export interface AgentRunIds {
  runId: string;
  conversationId: string;
  requester?: string;
}

/** `sha256:` and the hex SHA-256 of `text`. */
export function digestOf(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** The SDK's id of an interrupted call (a function call's `callId`, else the item's id). */
export function callIdOf(item: RunToolApprovalItem): string {
  const raw = item.rawItem as { callId?: string; id?: string };
  return raw.callId ?? raw.id ?? '';
}

/** The question shown for one interruption: the tool and its arguments. */
function questionText(question: StopQuestion): string {
  return `Allow the agent to call ${question.tool} with ${question.arguments || '{}'}?`;
}

/**
 * Writes a stop inside `tx`: the continuation `token` holding the serialized state, and one
 * `approve` question per interruption, each readying the run waiting on `token` when answered.
 */
export async function saveStop(
  tx: ExecutiveDatabase,
  { storage, events }: FlowContext,
  run: AgentRunIds,
  agent: Pick<Agent, 'name'>,
  // biome-ignore lint/suspicious/noExplicitAny: a run state of any agent.
  state: RunState<any, any>,
  token: string,
  policy: QuestionPolicy = NO_QUESTION_POLICY,
): Promise<Stop> {
  const questions = state.getInterruptions().map((item) => ({
    token: randomUUID(),
    callId: callIdOf(item),
    tool: item.name ?? 'tool',
    arguments: item.arguments ?? '',
  }));
  const stop: Stop = { version: STOP_VERSION, state: state.toString(), questions };
  await saveKindStop(storage, tx, run, token, STOP_TOOL, stop as unknown as JsonValue);
  // The state's digest is kept with each question too: a continuation changed since it was
  // written no longer matches it.
  const digest = digestOf(stop.state);
  for (const question of questions) {
    const pause = {
      token: question.token,
      conversationId: run.conversationId,
      kind: 'approve',
      question: questionText(question),
      options: null,
      priority: 0,
      toolCallId: question.callId,
      resumeContext: {
        model: agent.name,
        run: run.runId,
        parent: token,
        openaiAgents: { callId: question.callId, tool: question.tool, state: digest },
        // The SDK runs an approved call with the arguments the model gave, never edited ones.
        fixedArguments: true,
      },
      ...questionAnswerers({ kind: 'approve' }, run.requester, policy),
    };
    await storage.pauses(tx).insert(pause, {
      runId: run.runId,
      argumentsDigest: digestOf(question.arguments),
    });
    await events.record(tx, questionEvent('question.created', pause, { agentTool: question.tool }));
  }
  return stop;
}

/** The stop a continuation holds; throws when it is not one this version wrote. */
export function readStop(suspension: Suspension): Stop {
  const input = kindStopOf(suspension, STOP_TOOL) as Partial<Stop> | undefined;
  if (
    input?.version !== STOP_VERSION ||
    typeof input.state !== 'string' ||
    !Array.isArray(input.questions)
  ) {
    throw refused(`its continuation ${suspension.interactionId} is not an OpenAI Agents run`);
  }
  return input as Stop;
}

/** An error the worker does not retry: the run's stored state cannot be resumed. */
export function refused(why: string): Error {
  return Object.assign(new Error(`${why}; it is not resumed`), { retryable: false });
}
