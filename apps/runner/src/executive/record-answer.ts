import {
  type AnsweredPause,
  type AnsweredQuestion,
  type AnswerOptions,
  type AnswerOutcome,
  AskUserError,
  type AskUserStore,
  AUTO_TERMINATED_MARKER,
  type ResumeAnswer,
} from '@x/askuser';
import {
  acceptedArguments,
  type ExecutiveEvents,
  isGatedTool,
  lockForStatement,
  questionEvent,
  type ResumeContext,
} from '@x/executive';
import { type Pipeline, pipelinedTransaction } from '@x/postgres-kit';
import { demoGatedTools } from '../demo/tools.js';
import { forbiddenError, RunnerError, usageError } from '../errors.js';
import { failureOf } from '../failure.js';
import { outboxEvents } from '../notify/events.js';
import type { Db, Storage } from '../storage/index.js';
import { answerContentProblem } from './answer-limit.js';
import { traceWait, watching } from './telemetry.js';

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
 * Turns the store's `not_found` for tokens that were answered already into an
 * {@link AlreadyAnsweredError} saying how, by whom and when; other failures pass on.
 */
export async function refusal(storage: Storage, error: unknown, batch = false): Promise<never> {
  if (!AskUserError.hasCode(error, 'not_found') || error.tokens.length === 0) throw error;
  const answered: AnsweredPause[] = [];
  const unknown: string[] = [];
  for (const token of error.tokens) {
    const found = await storage
      .pauses()
      .getAnswer(token)
      .catch((missing: unknown) => {
        if (AskUserError.hasCode(missing, 'not_found')) return undefined;
        throw missing;
      });
    if (found) answered.push(found);
    else unknown.push(token);
  }
  if (answered.length === 0) {
    // The store's words name its rows (pauses); a person is told of questions and the command.
    const said = noQuestionWith(unknown);
    throw new AskUserError(
      'not_found',
      batch ? `batch not applied, nothing was answered: ${said}` : said,
      {
        tokens: error.tokens,
        cause: error,
      },
    );
  }
  const said = [
    ...answered.map((p) => `question ${p.token} was already answered: ${howClosed(p)}`),
    ...unknown.map((token) => `no question has the token ${token}`),
  ].join('; ');
  throw new AlreadyAnsweredError(
    batch ? `batch not applied, nothing was answered: ${said}` : said,
    answered,
  );
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
 * The answer to a gated call as it is recorded: an accepting one's edited arguments checked
 * against the tool's schema and written in one form (empty when they are the model's), so
 * that equal edits are equal text (what a quorum of approvals compares). Other answers, and
 * unknown or answered tokens (the store's to refuse), pass as they are.
 * @throws a usage error naming what does not fit, before anything is written.
 */
export async function gatedAnswer(
  storage: Storage,
  token: string,
  given: ResumeAnswer,
): Promise<ResumeAnswer> {
  if (given.action !== 'accept') return given;
  return recordedAnswer(token, given, await resumeContextOf(storage.pauses(), token));
}

/** The resume context of a pause, or undefined for an unknown token. */
async function resumeContextOf(pauses: AskUserStore, token: string): Promise<unknown> {
  const pending = await pauses.getByToken(token).catch(() => undefined);
  return pending?.resumeContext;
}

/**
 * {@link gatedAnswer} for a pause whose resume context is known.
 * @throws a usage error naming what does not fit.
 */
function recordedAnswer(token: string, given: ResumeAnswer, resumeContext: unknown): ResumeAnswer {
  const gated = (resumeContext as ResumeContext | null | undefined)?.gated;
  if (given.action !== 'accept' || !gated || !isGatedTool(demoGatedTools, gated.tool)) return given;
  const accepted = acceptedArguments(demoGatedTools, gated.tool, gated.arguments, given.content);
  if ('error' in accepted)
    throw usageError(`the answer to ${token} was not taken: ${accepted.error}`);
  return { action: 'accept', content: accepted.edited ? JSON.stringify(accepted.arguments) : '' };
}

/**
 * Thrown inside an answer's transaction, which it rolls back, when the answer as recorded
 * differs from the one given (a gated call's edits in their one form): the answer is taken
 * again with it.
 */
class RecordedDifferently extends Error {
  constructor(readonly answer: ResumeAnswer) {
    super('the answer is recorded in another form');
  }
}

/**
 * Throws {@link RecordedDifferently} (or a usage error) when `given`, just written, is not
 * the form its question records; `resumeContext` is the question's when the write returned
 * it, else it is read in the transaction.
 */
async function checkRecorded(
  storage: Storage,
  tx: Db,
  token: string,
  given: ResumeAnswer,
  resumeContext?: unknown,
): Promise<void> {
  if (given.action !== 'accept') return;
  const context =
    resumeContext === undefined ? await resumeContextOf(storage.pauses(tx), token) : resumeContext;
  const recorded = recordedAnswer(token, given, context);
  if (recorded.content !== given.content) throw new RecordedDifferently(recorded);
}

/**
 * Answers one pause and makes its run ready, in one transaction: an answer is never
 * recorded without its run becoming claimable, or the other way round.
 * `by` says who answered and how: an operator's `identity` (the store admits only the
 * question's audience), or an administrator's `answeredBy` (nothing checked), and through
 * what (`channel`: cli, api or page; `signedInWith`), for the audit log.
 * `also` writes in the same transaction first (a decision link consumed with its answer).
 * @throws {AlreadyAnsweredError} for a question answered already (how, by whom, when);
 *   the askuser store's errors (unknown token, bad answer, `forbidden`).
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

async function answerOne(
  storage: Storage,
  token: string,
  asGiven: ResumeAnswer,
  by: AnswerOptions,
  also: ((tx: Db) => Promise<void>) | undefined,
): Promise<AnswerOutcome> {
  checkAnswerSize(token, asGiven);
  // Written as given, and taken again in the recorded form in the rare case that differs
  // (a gated call's edits): no read of the question before the answer.
  try {
    return await answerAs(storage, token, asGiven, by, also, true);
  } catch (error) {
    if (!(error instanceof RecordedDifferently)) throw error;
    return answerAs(storage, token, error.answer, by, also, false);
  }
}

/** Answers in one transaction; `check`: that the answer is in its recorded form. */
async function answerAs(
  storage: Storage,
  token: string,
  given: ResumeAnswer,
  by: AnswerOptions,
  also: ((tx: Db) => Promise<void>) | undefined,
  check: boolean,
): Promise<AnswerOutcome> {
  if (also === undefined && !answersWanted(outboxEvents(storage))) {
    const outcome = await pipelinedTransaction(storage.db, (tx) =>
      answerInFlight(tx, storage, token, given, by, check),
    );
    if (outcome !== undefined) return outcome;
    // Not taken by one statement (refused, a quorum's approval with an audit key): the
    // general path below records what happened.
  }
  const done = await storage
    .transaction(async (tx, commitWith): Promise<AnswerOutcome | { error: unknown }> => {
      await also?.(tx);
      let outcome: AnswerOutcome;
      try {
        outcome = await storage.pauses(tx).markResumed(token, given, by);
      } catch (error) {
        const kept = keptRefusal(error);
        // A refusal is recorded with the answer in its recorded form too.
        if (check) await checkRecorded(storage, tx, token, given);
        return kept;
      }
      // The statement that resolved the question returned its resume context.
      if (check) await checkRecorded(storage, tx, token, given, outcome.question?.resumeContext);
      // An approval towards a quorum is recorded; the run waits for the rest.
      if (!outcome.resolved) return outcome;
      await recordAnswered(tx, storage, [token], by.channel);
      const context = outcome.question?.resumeContext as ResumeContext | null | undefined;
      if (context !== undefined && typeof context?.parent !== 'string') {
        // Not a worker's question: its own run is readied, sent with COMMIT.
        await commitWith(storage.runs(tx).markReady(token, given));
        return outcome;
      }
      if (await storage.runs(tx).markReady(token, given)) return outcome;
      // No run waits on the question itself: a worker's question readies its parent's run.
      const parent = await parentOf(tx, storage, token);
      if (!parent) return outcome;
      // Serialised with the delegated run's terminal write (see resumeDelegation).
      await storage.lockFor(tx, parent);
      await storage.runs(tx).markReady(parent, given);
      return outcome;
    })
    .catch((error: unknown) => refusal(storage, error, false));
  if ('error' in done) return refusal(storage, done.error, false);
  return done;
}

/**
 * The answer and its run readied in two round trips, with or without the audit log: BEGIN
 * goes with the answer; its audit entry, `markReady` and COMMIT go out together. Undefined
 * when the answer's statement did not take it (the transaction wrote nothing).
 */
async function answerInFlight(
  tx: Pipeline,
  storage: Storage,
  token: string,
  given: ResumeAnswer,
  by: AnswerOptions,
  check: boolean,
): Promise<AnswerOutcome | undefined> {
  const outcome = await storage.pauses().markResumedIn(tx, token, given, by);
  // Thrown before anything else is sent: the transaction rolls back and is taken again.
  if (outcome !== undefined && check) {
    const recorded = recordedAnswer(token, given, outcome.question?.resumeContext);
    if (recorded.content !== given.content) throw new RecordedDifferently(recorded);
  }
  // An approval towards a quorum is recorded; the run waits for the rest.
  if (!outcome?.resolved) return outcome;
  const readied = storage.runs().markReadyIn(tx, token, given);
  const parent = (outcome.question?.resumeContext as ResumeContext | null | undefined)?.parent;
  if (typeof parent !== 'string' || (await readied)) return outcome;
  // A worker's question readies its parent's run, serialised with the delegated run's
  // terminal write (see resumeDelegation).
  await tx.run(lockForStatement, { key: parent });
  await storage.runs().markReadyIn(tx, parent, given);
  return outcome;
}

/**
 * What a partial approval of a quorum says: `approval recorded: 2 of 3 approvals (ada, bob),
 * 1 more needed`; undefined for an answer that resolved its question.
 */
export function quorumText(outcome: AnswerOutcome): string | undefined {
  const q = outcome.quorum;
  if (outcome.resolved || q === undefined) return undefined;
  const given = q.approvals.length;
  const declined = q.declines.length > 0 ? `; declined by ${q.declines.join(', ')}` : '';
  const what = q.counted ? 'approval recorded' : 'already counted, once per person';
  return `${what}: ${given} of ${q.needed} approvals${given > 0 ? ` (${q.approvals.join(', ')})` : ''}, ${q.needed - given} more needed${declined}; the run waits`;
}

/**
 * A refused answer (already answered, unknown, forbidden, after the deadline), returned so that its transaction
 * commits the refusal's audit entry, and thrown after; any other failure is thrown at once.
 */
function keptRefusal(error: unknown): { error: unknown } {
  if (
    AskUserError.hasCode(error, 'not_found') ||
    AskUserError.hasCode(error, 'forbidden') ||
    AskUserError.hasCode(error, 'expired')
  ) {
    return { error };
  }
  throw error;
}

/** For a worker's question, the parent continuation its delegated run waits on. */
async function parentOf(tx: Db, storage: Storage, token: string): Promise<string | undefined> {
  const answered = await storage.pauses(tx).getAnswer(token);
  const parent = (answered?.resumeContext as ResumeContext | null)?.parent;
  return typeof parent === 'string' ? parent : undefined;
}

/**
 * Answers many pauses all or nothing, and makes their runs ready, in one transaction.
 * Returns how many were answered. With an `identity` in `by`, each answer is checked
 * against its question's audience, and one `forbidden` answers none (and, rolled back,
 * leaves no audit entry of the refusal).
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
): Promise<{ answered: number; questions: Array<{ token: string; question: AnsweredQuestion }> }> {
  const answers: Array<{ token: string; answer: ResumeAnswer }> = [];
  for (const a of given) {
    checkAnswerSize(a.token, a.answer);
    answers.push({ token: a.token, answer: await gatedAnswer(storage, a.token, a.answer) });
  }
  const done = await storage
    .transaction(async (tx) => {
      const pauses = storage.pauses(tx);
      let resolving = answers;
      // What the statements that resolved them returned, for their waits' spans.
      const questions: Array<{ token: string; question: AnsweredQuestion }> = [];
      if (by.identity) {
        // All or nothing: a refusal of one rolls back the answers before it.
        const outcomes: AnswerOutcome[] = [];
        for (const a of answers) outcomes.push(await pauses.markResumed(a.token, a.answer, by));
        // An approval towards a quorum readies no run.
        resolving = answers.filter((_, i) => outcomes[i]?.resolved);
        outcomes.forEach(({ question }, i) => {
          const token = answers[i]?.token;
          if (question && token) questions.push({ token, question });
        });
      } else {
        try {
          const resolved = await pauses.resolveBatch([...answers], {
            answeredBy: by.answeredBy,
          });
          for (const { token, ...question } of resolved) questions.push({ token, question });
        } catch (error) {
          return keptRefusal(error);
        }
      }
      await recordAnswered(
        tx,
        storage,
        resolving.map((a) => a.token),
        by.channel,
      );
      const runs = storage.runs(tx);
      const readied = await runs.markReadyMany(
        resolving.map((a) => ({ interactionId: a.token, input: a.answer })),
      );
      if (readied < resolving.length) {
        // Some questions have no run of their own: workers' questions ready their parent's.
        const parents = new Map<string, ResumeAnswer>();
        for (const a of resolving) {
          const parent = await parentOf(tx, storage, a.token);
          if (parent) parents.set(parent, a.answer);
        }
        // In one order, so that two batches never wait on each other's locks.
        for (const parent of [...parents.keys()].sort()) await storage.lockFor(tx, parent);
        await runs.markReadyMany(
          [...parents].map(([interactionId, input]) => ({ interactionId, input })),
        );
      }
      return { answered: answers.length, questions };
    })
    .catch((error: unknown) => refusal(storage, error, true));
  if ('error' in done) return refusal(storage, done.error, true);
  return done;
}

/** Whether an answer's event is wanted: else its transaction writes none (and may go in one flight). */
function answersWanted(events: ExecutiveEvents<Db>): boolean {
  return events.wants('question.answered') || events.wants('question.cancelled');
}

/**
 * Records, inside the answer's transaction, that the questions `tokens` were answered
 * (`question.cancelled` for a cancel), by whom and through what channel. Reads nothing
 * when neither event is wanted.
 */
async function recordAnswered(
  tx: Db,
  storage: Storage,
  tokens: readonly string[],
  channel?: string,
): Promise<void> {
  const events = outboxEvents(storage);
  if (!answersWanted(events)) return;
  for (const token of tokens) {
    const answered = await storage.pauses(tx).getAnswer(token);
    if (!answered) continue;
    const kind = answered.answer.action === 'cancel' ? 'question.cancelled' : 'question.answered';
    const extra = {
      answer: answered.answer,
      answeredBy: answered.answeredBy,
      ...(channel === undefined ? {} : { channel }),
    };
    await events.record(tx, questionEvent(kind, answered, extra));
  }
}
