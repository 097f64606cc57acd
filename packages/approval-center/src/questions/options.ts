import type { AnswerOptions, AnswerOutcome, ResumeAnswer } from '@x/askuser';
import {
  answerRefusal,
  type ExecutiveStorage,
  answer as executiveAnswer,
  answerBatch as executiveAnswerBatch,
  type FlowContext,
  type GatedTools,
  type Stopped,
  stop,
} from '@x/executive';
import type { EventHub } from '../live/event-hub.js';

/**
 * How the question API writes: answers, batches and stops. {@link executiveFlows} makes
 * them over `@x/executive`'s flows; a host gives its own to add its limits, telemetry and words.
 */
export interface QuestionFlows {
  /** Answers one question as `by` (the answer, its audit entry and event, its run made ready). */
  answer(token: string, given: ResumeAnswer, by: AnswerOptions): Promise<AnswerOutcome>;
  /** Answers all of `given` or none; how many were answered. */
  answerBatch(
    given: ReadonlyArray<{ token: string; answer: ResumeAnswer }>,
    by: AnswerOptions,
  ): Promise<number>;
  /** Stops a conversation: closes its questions and cancels its runs. */
  stop(conversationId: string): Promise<Stopped>;
  /**
   * Turns a failed read of the question `GET /api/pauses/TOKEN` asked for into its refusal
   * (an answered question's token: `already_answered`, with who answered and when).
   */
  refusal(error: unknown): Promise<never>;
}

/**
 * The question API of {@link ApprovalCenterOptions.questions}: list the pending questions and
 * the recent ones, show one with its run's context, answer (one or a batch), stop a
 * conversation, and the live feed. Questions of any origin are served: an app's own
 * `@x/askuser` rows (no executive run) as well as the executive's.
 */
export interface QuestionsOptions {
  /** Where the questions, runs and transcripts are (`sqlExecutiveStorage`, migrated). */
  storage: ExecutiveStorage;
  /** The gated tools whose calls are shown with their arguments' schema (and checked when answered); default none. */
  gatedTools?: GatedTools | undefined;
  /** How answers and stops are written; default {@link executiveFlows} over `storage`, announcing no events. */
  flows?: QuestionFlows | undefined;
  /**
   * The live feed (`GET /api/events`); default one the center makes over `storage` (polling
   * every second, and at once on {@link ApprovalCenter.poke}) and stops on `close`.
   */
  hub?: EventHub | undefined;
  /** Called after a write that may have answered questions: the host's worker may look again. */
  answered?: (() => void) | undefined;
  /** What is wrong with an answer's content (the end of a sentence), or undefined; default nothing. */
  contentProblem?: ((content: string) => string | undefined) | undefined;
  /** Refuses a viewer's answer by throwing; default an `ApprovalCenterError` `forbidden`. */
  refuseAnswerer?: ((message: string) => never) | undefined;
}

/**
 * The question API's writes over `@x/executive`'s flows: `flow` announces each answer's
 * event, `gatedTools` check an accepted gated call's edited arguments.
 * @example
 * const flows = executiveFlows({ storage, events: outboxEvents(storage) }, gatedTools);
 * createApprovalCenter({ questions: { storage, gatedTools, flows }, authenticate });
 */
export function executiveFlows(flow: FlowContext, gatedTools?: GatedTools): QuestionFlows {
  const options = gatedTools ? { gatedTools } : {};
  const refusal = async (error: unknown): Promise<never> => {
    throw await answerRefusal(flow.storage, error);
  };
  return {
    answer: (token, given, by) => executiveAnswer(flow, token, given, by, options).catch(refusal),
    answerBatch: async (given, by) =>
      (await executiveAnswerBatch(flow, given, by, options).catch(refusal)).answered,
    stop: (conversationId) => stop(flow, conversationId),
    refusal,
  };
}
