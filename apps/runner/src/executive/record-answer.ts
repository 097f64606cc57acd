import {
  type AnsweredPause,
  type AnsweredQuestion,
  type AnswerOptions,
  type AnswerOutcome,
  AskUserError,
  AUTO_TERMINATED_MARKER,
  type Pending,
  type ResumeAnswer,
} from '@x/askuser';
import {
  type AnsweredBatch,
  answerRefusal,
  ExecutiveError,
  answer as executiveAnswer,
  answerBatch as executiveAnswerBatch,
  type FlowContext,
  type HumanWait,
  traceWait as traceWaitOf,
} from '@x/executive';
import { demoGatedTools } from '../demo/tools.js';
import { forbiddenError, RunnerError, usageError } from '../errors.js';
import { failureOf } from '../failure.js';
import { outboxEvents } from '../notify/events.js';
import type { Db, Storage } from '../storage/index.js';
import { answerContentProblem } from './answer-limit.js';
import { watching } from './telemetry.js';

/** Records the wait of an answered or expired question, when traces are on. */
function traceWait(pause: AnsweredQuestion | Pending, outcome?: HumanWait['outcome']): void {
  traceWaitOf(watching, pause, outcome);
}

/** An answer refused because its question was answered already: how, by whom and when. */
export class AlreadyAnsweredError extends RunnerError {
  constructor(
    message: string,
    /** The questions that were answered already, with their answers. */
    readonly answered: readonly AnsweredPause[],
  ) {
    super('conflict', message);
  }
}

/**
 * How a question was answered, for a person: `accept "Kyoto" by ada at 2026-…`, or for one
 * nobody answered in time `expired at 2026-…: its default decline was applied`.
 */
export function howAnswered(pause: {
  answer: ResumeAnswer;
  answeredBy: string | null;
  resumedAt: Date | null;
  expiredAt?: Date | null;
}): string {
  const content = pause.answer.content ? ` "${pause.answer.content}"` : '';
  if (pause.expiredAt) {
    return `expired at ${pause.expiredAt.toISOString()}: its default ${pause.answer.action}${content} was applied`;
  }
  const by = pause.answeredBy ? ` by ${pause.answeredBy}` : '';
  const at = pause.resumedAt ? ` at ${pause.resumedAt.toISOString()}` : '';
  return `${pause.answer.action}${content}${by}${at}`;
}

/** A deadline and the time left until it, for a person: `deadline 2026-…Z (3 min left)`. */
export function deadlineText(at: Date, now = Date.now()): string {
  const left = at.getTime() - now;
  if (left <= 0) return `deadline ${at.toISOString()} (passed)`;
  const s = Math.ceil(left / 1000);
  const span =
    s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;
  return `deadline ${at.toISOString()} (${span} left)`;
}

/** Why a question is closed, for a person: how it was answered, or that its conversation stopped. */
function howClosed(pause: AnsweredPause): string {
  const { action, content } = pause.answer;
  return action === 'cancel' && content === AUTO_TERMINATED_MARKER
    ? `closed when its conversation ${pause.conversationId} was stopped, at ${pause.resumedAt.toISOString()}`
    : howAnswered(pause);
}

/** What a person is told of tokens no question has, with the command that lists the pending ones. */
export function noQuestionWith(tokens: readonly string[]): string {
  const listed = tokens.join(', ');
  return `no question has the token${tokens.length === 1 ? '' : 's'} ${listed}: \`runner paused-states list\` lists the pending ones`;
}

/**
 * Turns a refused answer, or the store's `not_found` for a token, into what a person is
 * told: an {@link AlreadyAnsweredError} saying how, by whom and when, or a `not_found` that
 * names the command listing the pending questions; other failures pass on.
 */
export async function refusal(storage: Storage, error: unknown, batch = false): Promise<never> {
  const typed = await answerRefusal(storage, error);
  const head = batch ? 'batch not applied, nothing was answered: ' : '';
  if (ExecutiveError.hasCode(typed, 'not_found') && typed.tokens.length > 0) {
    // The package's words name no command; a person is told of the one that lists them.
    throw new AskUserError('not_found', `${head}${noQuestionWith(typed.tokens)}`, {
      tokens: typed.tokens,
      cause: typed,
    });
  }
  if (!ExecutiveError.hasCode(typed, 'already_answered')) throw typed;
  const known = new Set(typed.answered.map((p) => p.token));
  const said = [
    ...typed.answered.map((p) => `question ${p.token} was already answered: ${howClosed(p)}`),
    ...typed.tokens
      .filter((token) => !known.has(token))
      .map((token) => `no question has the token ${token}`),
  ].join('; ');
  throw new AlreadyAnsweredError(`${head}${said}`, typed.answered);
}

/**
 * Refuses an answer whose content is over {@link MAX_ANSWER_CHARS} or cannot be stored,
 * before anything is written.
 * @throws a usage error that names the limit.
 */
export function checkAnswerSize(token: string, given: ResumeAnswer): void {
  const problem = answerContentProblem(given.content ?? '');
  if (problem === undefined) return;
  throw usageError(`the answer to ${token} ${problem}; nothing was changed`);
}

/**
 * Answers one pause through `@x/executive`'s `answer` (one transaction: the answer, its audit
 * entry and event, its run made ready), after the runner's content limit, with the demo's
 * gated tools. `by` says who answered and how: an operator's `identity` (audience and
 * requester checked), or an administrator's `answeredBy` (nothing checked), and through what
 * (`channel`: cli, api or page; `signedInWith`), for the audit log.
 * `also` writes in the same transaction first (a decision link consumed with its answer).
 * @throws {AlreadyAnsweredError} for a question answered already (how, by whom, when); the
 *   store's `not_found` in the runner's words; `@x/executive`'s `forbidden`, `expired`, `usage`.
 */
export async function answer(
  storage: Storage,
  token: string,
  asGiven: ResumeAnswer,
  by: AnswerOptions = {},
  also?: (tx: Db) => Promise<void>,
): Promise<AnswerOutcome> {
  const outcome = await (watching.telemetry
    ? answerOne(storage, token, asGiven, by, also).catch(countRefusal)
    : answerOne(storage, token, asGiven, by, also));
  // The statement that resolved the question returned it (a quorum's last approval too); a
  // partial approval leaves it waiting: its wait goes on.
  if (outcome.question) traceWait(outcome.question, asGiven.action);
  return outcome;
}

/**
 * Counts a refused answer by why (`conflict`: answered already; `not_found`, `forbidden`,
 * `expired`, `usage`) and throws it on; a database that failed is no refusal.
 */
function countRefusal(error: unknown): never {
  const reason = failureOf(error);
  if (reason !== 'unavailable' && reason !== 'failed') watching.telemetry?.answerRefused(reason);
  throw error;
}

/**
 * Refuses an answer before it reaches the store (a viewer, someone who answers as no live
 * operator) with a `forbidden` error, counted as the store's own refusals are.
 */
export function refuseAnswerer(message: string): never {
  return countRefusal(forbiddenError(message));
}

/** Answers through the package, with the runner's answer limits, demo tools and words. */
async function answerOne(
  storage: Storage,
  token: string,
  asGiven: ResumeAnswer,
  by: AnswerOptions,
  also: ((tx: Db) => Promise<void>) | undefined,
): Promise<AnswerOutcome> {
  checkAnswerSize(token, asGiven);
  const options = { gatedTools: demoGatedTools, ...(also ? { also } : {}) };
  return executiveAnswer(flowOf(storage), token, asGiven, by, options).catch((error: unknown) =>
    refusal(storage, error, false),
  );
}

/** The flows' context over the runner's storage: its events go to its notify rules. */
function flowOf(storage: Storage): FlowContext {
  return { storage, events: outboxEvents(storage) };
}

/**
 * Answers many pauses all or nothing through `@x/executive`'s `answerBatch`, and makes their
 * runs ready, in one transaction. Returns how many were answered. With an `identity` in `by`,
 * one `forbidden` answers none (and, rolled back, leaves no audit entry of the refusal).
 * @throws {AlreadyAnsweredError} when some were answered already; nothing is answered.
 */
export async function answerBatch(
  storage: Storage,
  given: ReadonlyArray<{ token: string; answer: ResumeAnswer }>,
  by: AnswerOptions = {},
): Promise<number> {
  const { answered, questions } = await (watching.telemetry
    ? answerMany(storage, given, by).catch(countRefusal)
    : answerMany(storage, given, by));
  const actions = new Map(given.map((a) => [a.token, a.answer.action]));
  for (const { token, question } of questions) traceWait(question, actions.get(token));
  return answered;
}

async function answerMany(
  storage: Storage,
  given: ReadonlyArray<{ token: string; answer: ResumeAnswer }>,
  by: AnswerOptions,
): Promise<AnsweredBatch> {
  for (const a of given) checkAnswerSize(a.token, a.answer);
  return executiveAnswerBatch(flowOf(storage), given, by, { gatedTools: demoGatedTools }).catch(
    (error: unknown) => refusal(storage, error, true),
  );
}
