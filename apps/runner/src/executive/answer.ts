import type { ResumeAnswer } from '@x/askuser';
import type { Storage } from '../storage.js';

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
  await storage.transaction(async (tx) => {
    await storage.pauses(tx).markResumed(token, given, { answeredBy });
    await storage.runs(tx).markReady(token, given);
  });
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
  return storage.transaction(async (tx) => {
    const answered = await storage.pauses(tx).markResumedBatch([...answers], { answeredBy });
    await storage
      .runs(tx)
      .markReadyMany(answers.map((a) => ({ interactionId: a.token, input: a.answer })));
    return answered;
  });
}
