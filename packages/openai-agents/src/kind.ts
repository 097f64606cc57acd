import { type Agent, RunState, run } from '@openai/agents';
import { type ResumeAnswer, resumeAnswerSchema } from '@x/askuser';
import {
  cancelRun,
  type FlowContext,
  isChangedApproval,
  NO_QUESTION_POLICY,
  type QuestionPolicy,
  type RunKind,
  type RunResult,
  requesterOf,
  runEvent,
} from '@x/executive';
import { assistantMessage } from '@x/wire';
import {
  type AgentRunIds,
  callIdOf,
  digestOf,
  OPENAI_AGENTS_KIND,
  readStop,
  refused,
  type Stop,
  saveStop,
} from './stop.js';

/** An agent of any context and output type. */
// biome-ignore lint/suspicious/noExplicitAny: an agent of any context and output.
export type AnyAgent = Agent<any, any>;

/** What a run of an agent is started with, and how its questions are governed. */
export interface AgentRunOptions {
  /** Who may answer its questions, their deadlines and defaults. */
  policy?: QuestionPolicy;
  /** Aborts the model call in flight. */
  signal?: AbortSignal;
}

/** The waiting result of a stop: its first question's token, and every question. */
function waitingResult(ids: AgentRunIds, stop: Stop): Extract<RunResult, { status: 'waiting' }> {
  const first = stop.questions[0];
  return {
    status: 'waiting',
    runId: ids.runId,
    conversationId: ids.conversationId,
    token: first?.token ?? '',
    question: first ? `${first.tool} ${first.arguments}` : '',
    options: null,
  };
}

/** The final output of a finished run, as the text recorded with it. */
function outputText(output: unknown): string {
  return typeof output === 'string' ? output : JSON.stringify(output ?? null);
}

/**
 * Runs `agent` on `input` as a new run of the kind {@link OPENAI_AGENTS_KIND}: when it stops
 * on tool approvals, the run waits (its `RunState` stored server-side, one question per
 * interruption); when it finishes, the run is recorded completed with its final output.
 */
export async function startAgentRun(
  flow: FlowContext,
  ids: AgentRunIds,
  agent: AnyAgent,
  input: string,
  options: AgentRunOptions = {},
): Promise<RunResult> {
  const result = await run(agent, input, options.signal ? { signal: options.signal } : {});
  const { storage } = flow;
  const { requester, ...runIds } = ids;
  const meta = { kind: OPENAI_AGENTS_KIND, ...(requester === undefined ? {} : { requester }) };
  const token = crypto.randomUUID();
  // A run that never stops needs nothing kept: it is not recorded.
  if (result.interruptions.length === 0) {
    const messages = [assistantMessage(outputText(result.finalOutput))];
    return { status: 'completed', ...runIds, messages };
  }
  const stop = await storage.transaction(async (tx) => {
    await storage.runs(tx).create({ ...runIds, status: 'waiting', interactionId: token, meta });
    return saveStop(tx, flow, ids, agent, result.state, token, options.policy);
  });
  return waitingResult(ids, stop);
}

/** What the kind needs to resume runs: the agent they were started with, and the policy. */
export interface OpenAIAgentsKindOptions {
  /** The agent a stored `RunState` is restored with (`RunState.fromString(agent, state)`). */
  agent: AnyAgent;
  /** Who may answer the questions of a later stop. */
  policy?: QuestionPolicy;
  /**
   * Hears the restored `RunState`, every answer applied, right before the agent runs it again
   * (e.g. to log it, or for a test to stop the worker there); default none.
   */
  beforeRun?: (state: RunState<unknown, AnyAgent>) => void | Promise<void>;
}

/** The answers given so far to a stop's questions, by token, with what each question kept. */
async function answersOf(
  flow: FlowContext,
  stop: Stop,
): Promise<Map<string, { answer: ResumeAnswer; digest: unknown; callId: unknown }>> {
  const answers = new Map<string, { answer: ResumeAnswer; digest: unknown; callId: unknown }>();
  for (const question of stop.questions) {
    const answered = await flow.storage.pauses().getAnswer(question.token);
    if (!answered) continue;
    const context = answered.resumeContext as {
      openaiAgents?: { state?: unknown; callId?: unknown };
    } | null;
    answers.set(question.token, {
      answer: resumeAnswerSchema.parse(answered.answer),
      digest: context?.openaiAgents?.state,
      callId: context?.openaiAgents?.callId,
    });
  }
  return answers;
}

/**
 * The run kind {@link OPENAI_AGENTS_KIND}: when every question of a stop is answered, it
 * restores the stored `RunState`, applies each answer (`approve`, or `reject` with the
 * person's reason as the message the model gets) and runs the agent again, once, under the
 * run's lease; a new stop asks again, a finished run completes with its final output.
 */
export function openaiAgentsKind(options: OpenAIAgentsKindOptions): RunKind {
  const { agent, policy = NO_QUESTION_POLICY, beforeRun } = options;
  return {
    async resume({ flow, job, suspension, answer }) {
      const { storage } = flow;
      const { runId, conversationId } = job.run;
      const token = job.run.interactionId ?? '';
      if (answer.action === 'cancel') {
        await cancelRun(storage, job, 'cancelled by a person', { closeQuestions: true });
        return { status: 'cancelled', runId, conversationId };
      }
      const stop = readStop(suspension);
      const answers = await answersOf(flow, stop);
      const requester = requesterOf(job.run.meta);
      const ids = { runId, conversationId, ...(requester === undefined ? {} : { requester }) };
      if (answers.size < stop.questions.length) {
        // Not all answered: it waits again; an answer that came meanwhile readies it at once.
        await storage.transaction(async (tx) => {
          await storage.lockFor(tx, token);
          await storage
            .runs(tx)
            .finish(runId, job.owner, { status: 'waiting', interactionId: token });
          for (const question of stop.questions) {
            const given = await storage.pauses(tx).getAnswer(question.token);
            if (!answers.has(question.token) && given) {
              await storage.runs(tx).markReady(token, given.answer);
              break;
            }
          }
        });
        return waitingResult(ids, stop);
      }
      const digest = digestOf(stop.state);
      for (const question of stop.questions) {
        const given = answers.get(question.token);
        if (given?.digest !== digest || given.callId !== question.callId) {
          throw refused(`its stored state does not match the question ${question.token}`);
        }
      }
      let state: RunState<unknown, AnyAgent>;
      try {
        state = await RunState.fromString(agent, stop.state);
      } catch (error) {
        throw refused(`its stored state cannot be restored (${(error as Error).message})`);
      }
      const interruptions = state.getInterruptions();
      const byCall = new Map(stop.questions.map((q) => [q.callId, q]));
      if (
        interruptions.length !== stop.questions.length ||
        interruptions.some((item) => !byCall.has(callIdOf(item)))
      ) {
        throw refused('its stored state waits on other calls than its questions');
      }
      for (const item of interruptions) {
        const question = byCall.get(callIdOf(item));
        const given = question ? answers.get(question.token)?.answer : undefined;
        // An approval the state already holds was not given here: refused, not applied.
        const decided = state._context.isToolApproved({
          toolName: item.name ?? '',
          callId: callIdOf(item),
        });
        if (decided !== undefined)
          throw refused('its stored state holds a decision not given here');
        if (given?.action === 'accept' && !isChangedApproval(given.content)) state.approve(item);
        else if (given?.action === 'accept') {
          // The SDK cannot run a call with other arguments: the changes are told, never dropped.
          state.reject(item, { message: changesNotApplied(given.content ?? '') });
        } else {
          const reason = given?.content ? `: ${given.content}` : '';
          state.reject(item, { message: `A person declined this call${reason}` });
        }
      }
      await beforeRun?.(state);
      const result = await run(agent, state, { signal: job.signal });
      if (result.interruptions.length > 0) {
        const next = crypto.randomUUID();
        const saved = await storage.transaction(async (tx) => {
          await storage
            .runs(tx)
            .finish(runId, job.owner, { status: 'waiting', interactionId: next });
          const written = await saveStop(tx, flow, ids, agent, result.state, next, policy);
          await storage.continuations(tx).markResolved(token);
          return written;
        });
        return waitingResult(ids, saved);
      }
      const messages = [assistantMessage(outputText(result.finalOutput))];
      if (!flow.events.wants('run.completed')) await job.complete(messages);
      else {
        await storage.transaction(async (tx) => {
          await storage.runs(tx).complete(runId, job.owner, messages);
          await flow.events.record(tx, runEvent('run.completed', job.run));
        });
      }
      return { status: 'completed', runId, conversationId, messages };
    },
  };
}

/** The reason a call approved with changes is rejected: the changes were not applied. */
function changesNotApplied(content: string): string {
  return `A person approved this call with changes, which cannot be applied to its arguments, so it was not run (${content.trim()})`;
}
