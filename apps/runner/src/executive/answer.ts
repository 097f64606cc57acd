import type { ResumeAnswer } from '@x/askuser';
import { DEFAULT_MAX_RECORD_BYTES } from '@x/continuation';
import { usageError } from '../errors.js';
import { type Db, lockFor, type Storage } from '../storage.js';
import type { ResumeContext } from './suspend.js';

/**
 * The largest answer taken, encoded as JSON: a sixteenth of what the continuation store keeps
 * of a turn (1 MiB of 16 MiB), since the answer goes into the turn's continuation with the
 * transcript, and the model may quote it back more than once.
 */
export const MAX_ANSWER_BYTES = DEFAULT_MAX_RECORD_BYTES / 16;

/**
 * Refuses an answer whose run could never be saved again, before anything is written.
 * @throws a usage error that gives the limit.
 */
export function checkAnswerSize(token: string, given: ResumeAnswer): void {
  const bytes = Buffer.byteLength(JSON.stringify(given.content ?? ''));
  if (bytes <= MAX_ANSWER_BYTES) return;
  throw usageError(
    `the answer to ${token} is ${bytes} bytes encoded, over the limit of ${MAX_ANSWER_BYTES} bytes (${MAX_ANSWER_BYTES / 1024 / 1024} MiB) for an answer: a turn's saved continuation holds at most ${DEFAULT_MAX_RECORD_BYTES} bytes, transcript and answer together`,
  );
}

/**
 * Answers one pause and makes its run ready, in one transaction: an answer is never
 * recorded without its run becoming claimable, or the other way round.
 * `answeredBy` names who answered, for the audit trail.
 * @throws the askuser store's errors (unknown or already answered token, bad answer).
 */
export async function answer(
  storage: Storage,
  token: string,
  given: ResumeAnswer,
  answeredBy: string | null = null,
): Promise<void> {
  checkAnswerSize(token, given);
  await storage.transaction(async (tx) => {
    await storage.pauses(tx).markResumed(token, given, { answeredBy });
    if (await storage.runs(tx).markReady(token, given)) return;
    // No run waits on the question itself: a worker's question readies its parent's run.
    const parent = await parentOf(tx, storage, token);
    if (!parent) return;
    // Serialised with the delegated run's terminal write (see resumeDelegation).
    await lockFor(tx, parent);
    await storage.runs(tx).markReady(parent, given);
  });
}

/** For a worker's question, the parent continuation its delegated run waits on. */
async function parentOf(tx: Db, storage: Storage, token: string): Promise<string | undefined> {
  const answered = await storage.pauses(tx).getAnswer(token);
  const parent = (answered?.resumeContext as ResumeContext | null)?.parent;
  return typeof parent === 'string' ? parent : undefined;
}

/**
 * Answers many pauses all or nothing, and makes their runs ready, in one transaction.
 * Returns how many were answered.
 */
export async function answerBatch(
  storage: Storage,
  answers: ReadonlyArray<{ token: string; answer: ResumeAnswer }>,
  answeredBy: string | null = null,
): Promise<number> {
  for (const a of answers) checkAnswerSize(a.token, a.answer);
  return storage.transaction(async (tx) => {
    const answered = await storage.pauses(tx).markResumedBatch([...answers], { answeredBy });
    const runs = storage.runs(tx);
    const readied = await runs.markReadyMany(
      answers.map((a) => ({ interactionId: a.token, input: a.answer })),
    );
    if (readied < answers.length) {
      // Some questions have no run of their own: workers' questions ready their parent's.
      const parents = new Map<string, ResumeAnswer>();
      for (const a of answers) {
        const parent = await parentOf(tx, storage, a.token);
        if (parent) parents.set(parent, a.answer);
      }
      // In one order, so that two batches never wait on each other's locks.
      for (const parent of [...parents.keys()].sort()) await lockFor(tx, parent);
      await runs.markReadyMany(
        [...parents].map(([interactionId, input]) => ({ interactionId, input })),
      );
    }
    return answered;
  });
}
