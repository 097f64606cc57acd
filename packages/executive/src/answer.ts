import {
  type AnsweredQuestion,
  type AnswerOptions,
  type AnswerOutcome,
  AskUserError,
  type ResumeAnswer,
} from '@x/askuser';
import { type Pipeline, pipelinedTransaction } from '@x/postgres-kit';
import { ExecutiveError, withoutOrigin } from './errors.js';
import { type ExecutiveEvents, questionEvent } from './events.js';
import type { FlowContext } from './flow.js';
import { acceptedArguments, type GatedTools, isGatedTool } from './gated-tools.js';
import { lockForStatement } from './sql-storage.js';
import type { ExecutiveDatabase as Db, ExecutiveStorage } from './storage.js';
import type { ResumeContext } from './suspend.js';

/** Options of {@link answer} and {@link answerBatch}. */
export interface AnswerFlowOptions {
  /**
   * The gated tools: an accepting answer to one of their calls has its edited arguments
   * checked against the tool's schema and recorded in one form (empty when they are the
   * model's), so that equal edits are equal text for a quorum; none: answers are recorded as given.
   */
  gatedTools?: GatedTools;
  /**
   * Writes in the answer's transaction before it (a single-use link consumed with its
   * answer); {@link answer} only. With it the answer goes the general, two-flight way. A
   * refused answer commits them too, with the refusal's audit entry.
   */
  also?: (tx: Db) => Promise<void>;
}

/** What {@link answerBatch} answered: how many, and the questions it resolved. */
export interface AnsweredBatch {
  answered: number;
  /** Each resolved question as its answer's statement returned it (a partial approval: none). */
  questions: Array<{ token: string; question: AnsweredQuestion }>;
}

/**
 * Answers one question and makes its run ready, in one transaction: an answer is never
 * recorded without its run becoming claimable, or the other way round. `by` is the answering
 * identity: an operator's `identity` (admitted only when in the question's audience, and not
 * its requester where the requester may not approve), or an administrator's `answeredBy`
 * (nothing checked), and through what (`channel`, `signedInWith`) for the audit log and the
 * `question.answered` event, both written in the same transaction. A quorum's approval is
 * recorded and the run waits for the rest (`resolved` false). With no audit log and no event
 * wanted the answer and its run go out in one flight (BEGIN with the answer, COMMIT with the run).
 *
 * @example
 * const outcome = await answer(flow, token, { action: 'accept', content: 'Kyoto' }, {
 *   identity: { name: 'ada', roles: ['finance'] },
 * });
 * @throws {ExecutiveError} `not_found` (no question has the token), `already_answered` (its
 *   `answered` says how, by whom and when), `forbidden` (not the audience, or the requester),
 *   `expired` (at or after the deadline); the refusal's audit entry is kept. `@x/askuser`'s
 *   `invalid_answer` for a malformed answer, before anything is written.
 */
export async function answer(
  flow: FlowContext,
  token: string,
  given: ResumeAnswer,
  by: AnswerOptions = {},
  options: AnswerFlowOptions = {},
): Promise<AnswerOutcome> {
  // Written as given, and taken again in the recorded form in the rare case that differs
  // (a gated call's edits): no read of the question before the answer.
  try {
    return await answerAs(flow, token, given, by, options, true);
  } catch (error) {
    if (!(error instanceof RecordedDifferently)) throw error;
    return answerAs(flow, token, error.answer, by, options, false);
  }
}

/**
 * Answers many questions all or nothing, and makes their runs ready, in one transaction.
 * With an `identity` in `by`, each answer is checked as in {@link answer}, and one refusal
 * answers none (rolled back, it leaves no audit entry of the refusal).
 *
 * @example
 * const { answered } = await answerBatch(flow, [
 *   { token: a, answer: { action: 'accept', content: '' } },
 *   { token: b, answer: { action: 'decline', content: 'not now' } },
 * ], { identity: { name: 'ada', roles: ['finance'] } });
 * @throws {ExecutiveError} as {@link answer}; nothing is answered. `usage` for an edit of a
 *   gated call that does not fit its tool's schema.
 */
export async function answerBatch(
  flow: FlowContext,
  given: ReadonlyArray<{ token: string; answer: ResumeAnswer }>,
  by: AnswerOptions = {},
  options: Pick<AnswerFlowOptions, 'gatedTools'> = {},
): Promise<AnsweredBatch> {
  const { storage } = flow;
  const answers: Array<{ token: string; answer: ResumeAnswer }> = [];
  for (const a of given) {
    answers.push({ token: a.token, answer: await gatedAnswer(storage, options, a) });
  }
  const done = await storage
    .transaction(async (tx): Promise<AnsweredBatch | { error: unknown }> => {
      const pauses = storage.pauses(tx);
      let resolving = answers;
      const questions: AnsweredBatch['questions'] = [];
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
          const resolved = await pauses.resolveBatch([...answers], { answeredBy: by.answeredBy });
          for (const { token, ...question } of resolved) questions.push({ token, question });
        } catch (error) {
          return keptRefusal(error);
        }
      }
      await recordAnswered(
        tx,
        flow,
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
    .catch(async (error: unknown) => {
      throw await answerRefusal(storage, error);
    });
  if ('error' in done) throw await answerRefusal(storage, done.error);
  return done;
}

/**
 * The refusal of an answer (or of a read of a question by its token) as the executive's
 * typed error: `@x/askuser`'s `not_found` becomes `already_answered` when some of its
 * tokens were answered (`answered` holds how, by whom and when) or else `not_found`, and its
 * `forbidden` and `expired` become the executive's; any other error is returned as it is.
 *
 * @example
 * const pending = await storage.pauses().getByToken(token).catch(async (error) => {
 *   throw await answerRefusal(storage, error);
 * });
 */
export async function answerRefusal(storage: ExecutiveStorage, error: unknown): Promise<unknown> {
  const refused = AskUserError.hasCode(error, 'forbidden')
    ? 'forbidden'
    : AskUserError.hasCode(error, 'expired')
      ? 'expired'
      : undefined;
  if (refused !== undefined && AskUserError.is(error)) {
    return new ExecutiveError(refused, withoutOrigin(error.message), {
      tokens: error.tokens,
      cause: error,
    });
  }
  if (!AskUserError.hasCode(error, 'not_found') || error.tokens.length === 0) return error;
  const tokens = error.tokens;
  const answered = [];
  for (const token of tokens) {
    const found = await storage
      .pauses()
      .getAnswer(token)
      .catch((missing: unknown) => {
        if (AskUserError.hasCode(missing, 'not_found')) return undefined;
        throw missing;
      });
    if (found) answered.push(found);
  }
  const known = new Set(answered.map((p) => p.token));
  const unknown = tokens.filter((token) => !known.has(token));
  if (answered.length === 0) {
    const listed = unknown.join(', ');
    const message = `no question has the token${unknown.length === 1 ? '' : 's'} ${listed}`;
    return new ExecutiveError('not_found', message, { tokens, cause: error });
  }
  const message = [
    ...answered.map((p) => `question ${p.token} was already answered`),
    ...unknown.map((token) => `no question has the token ${token}`),
  ].join('; ');
  return new ExecutiveError('already_answered', message, { tokens, answered, cause: error });
}

/**
 * The answer to a gated call as it is recorded (see {@link AnswerFlowOptions.gatedTools});
 * other answers, and unknown or answered tokens (the store's to refuse), pass as they are.
 */
async function gatedAnswer(
  storage: ExecutiveStorage,
  { gatedTools }: AnswerFlowOptions,
  { token, answer: given }: { token: string; answer: ResumeAnswer },
): Promise<ResumeAnswer> {
  if (given.action !== 'accept' || gatedTools === undefined) return given;
  return recordedAnswer(gatedTools, token, given, await resumeContextOf(storage, token));
}

/** The resume context of a question, or undefined for an unknown token. */
async function resumeContextOf(storage: ExecutiveStorage, token: string, tx?: Db) {
  const pending = await storage
    .pauses(tx)
    .getByToken(token)
    .catch(() => undefined);
  return pending?.resumeContext;
}

/**
 * {@link gatedAnswer} for a question whose resume context is known.
 * @throws {ExecutiveError} `usage` naming what does not fit.
 */
function recordedAnswer(
  gatedTools: GatedTools | undefined,
  token: string,
  given: ResumeAnswer,
  resumeContext: unknown,
): ResumeAnswer {
  const gated = (resumeContext as ResumeContext | null | undefined)?.gated;
  if (given.action !== 'accept' || !gated || !gatedTools || !isGatedTool(gatedTools, gated.tool)) {
    return given;
  }
  const accepted = acceptedArguments(gatedTools, gated.tool, gated.arguments, given.content);
  if ('error' in accepted) {
    throw new ExecutiveError('usage', `the answer to ${token} was not taken: ${accepted.error}`, {
      tokens: [token],
    });
  }
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
 * Throws {@link RecordedDifferently} (or a `usage` error) when `given`, just written, is not
 * the form its question records; `resumeContext` is the question's when the write returned
 * it, else it is read in the transaction.
 */
async function checkRecorded(
  storage: ExecutiveStorage,
  gatedTools: GatedTools | undefined,
  tx: Db,
  token: string,
  given: ResumeAnswer,
  resumeContext?: unknown,
): Promise<void> {
  if (given.action !== 'accept' || gatedTools === undefined) return;
  const context =
    resumeContext === undefined ? await resumeContextOf(storage, token, tx) : resumeContext;
  const recorded = recordedAnswer(gatedTools, token, given, context);
  if (recorded.content !== given.content) throw new RecordedDifferently(recorded);
}

/** Answers in one transaction; `check`: that the answer is in its recorded form. */
async function answerAs(
  flow: FlowContext,
  token: string,
  given: ResumeAnswer,
  by: AnswerOptions,
  { gatedTools, also }: AnswerFlowOptions,
  check: boolean,
): Promise<AnswerOutcome> {
  const { storage } = flow;
  if (also === undefined && !answersWanted(flow.events)) {
    const outcome = await pipelinedTransaction(storage.db, (tx) =>
      answerInFlight(tx, storage, gatedTools, token, given, by, check),
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
        if (check) await checkRecorded(storage, gatedTools, tx, token, given);
        return kept;
      }
      // The statement that resolved the question returned its resume context.
      if (check) {
        const context = outcome.question?.resumeContext;
        await checkRecorded(storage, gatedTools, tx, token, given, context);
      }
      // An approval towards a quorum is recorded; the run waits for the rest.
      if (!outcome.resolved) return outcome;
      await recordAnswered(tx, flow, [token], by.channel);
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
    .catch(async (error: unknown) => {
      throw await answerRefusal(storage, error);
    });
  if ('error' in done) throw await answerRefusal(storage, done.error);
  return done;
}

/**
 * The answer and its run readied in two round trips: BEGIN goes with the answer; its
 * `markReady` and COMMIT go out together. Undefined when the answer's statement did not
 * take it (the transaction wrote nothing).
 */
async function answerInFlight(
  tx: Pipeline,
  storage: ExecutiveStorage,
  gatedTools: GatedTools | undefined,
  token: string,
  given: ResumeAnswer,
  by: AnswerOptions,
  check: boolean,
): Promise<AnswerOutcome | undefined> {
  const outcome = await storage.pauses().markResumedIn(tx, token, given, by);
  // Thrown before anything else is sent: the transaction rolls back and is taken again.
  if (outcome !== undefined && check) {
    const recorded = recordedAnswer(gatedTools, token, given, outcome.question?.resumeContext);
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
 * A refused answer (already answered, unknown, forbidden, after the deadline), returned so
 * that its transaction commits the refusal's audit entry, and thrown after; any other
 * failure is thrown at once.
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
async function parentOf(
  tx: Db,
  storage: ExecutiveStorage,
  token: string,
): Promise<string | undefined> {
  const answered = await storage.pauses(tx).getAnswer(token);
  const parent = (answered?.resumeContext as ResumeContext | null)?.parent;
  return typeof parent === 'string' ? parent : undefined;
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
  { storage, events }: FlowContext,
  tokens: readonly string[],
  channel?: string,
): Promise<void> {
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
