import type { ResumeAnswer } from '@x/askuser';
import type { Db, Storage } from '../storage.js';
import type { ResumeContext } from './suspend.js';

/**
 * Answers one pause and makes its run ready, in one transaction: an answer is never
 * recorded without its run becoming claimable, or the other way round.
 * @throws the askuser store's errors (unknown or already answered token, bad answer).
 */
export async function answer(storage: Storage, token: string, given: ResumeAnswer): Promise<void> {
  await storage.transaction(async (tx) => {
    await storage.pauses(tx).markResumed(token, given);
    await storage.runs(tx).markReady(await waitedOn(tx, storage, token), given);
  });
}

/**
 * The continuation whose run an answer makes ready: the question's own, or for a worker's
 * question the parent's (the delegated run waits on that one).
 */
async function waitedOn(tx: Db, storage: Storage, token: string): Promise<string> {
  const answered = await storage.pauses(tx).getAnswer(token);
  const parent = (answered?.resumeContext as ResumeContext | null)?.parent;
  return typeof parent === 'string' ? parent : token;
}

/**
 * Answers many pauses all or nothing, and makes their runs ready, in one transaction.
 * Returns how many were answered.
 */
export async function answerBatch(
  storage: Storage,
  answers: ReadonlyArray<{ token: string; answer: ResumeAnswer }>,
): Promise<number> {
  return storage.transaction(async (tx) => {
    const answered = await storage.pauses(tx).markResumedBatch([...answers]);
    const ready = new Map<string, ResumeAnswer>();
    for (const a of answers) ready.set(await waitedOn(tx, storage, a.token), a.answer);
    await storage
      .runs(tx)
      .markReadyMany([...ready].map(([interactionId, input]) => ({ interactionId, input })));
    return answered;
  });
}
