import { pausedStates, type ResumeAnswer, resumeAnswerSchema } from '@x/askuser';
import { suspensions } from '@x/continuation-postgres';
import { and, asc, eq, isNotNull, notInArray } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from './storage.js';

/** An answered pause whose run has not finished, locked for this transaction. */
export interface Claimed {
  token: string;
  conversationId: string;
  answer: ResumeAnswer;
  /** The model the run was started with (from the pause's resume context). */
  modelId: string;
}

/**
 * Claims the oldest answered pause whose continuation is still unresolved, with
 * `FOR UPDATE OF paused_states SKIP LOCKED`: concurrent executives each get a different
 * pause, and a pause held by a crashed executive is free again when its connection drops.
 * Must run inside a transaction; the lock lasts until it ends.
 */
export async function claimAnswered(
  tx: Db,
  skip: ReadonlySet<string>,
): Promise<Claimed | undefined> {
  // FOR UPDATE OF takes an unqualified name, so the schema-qualified table gets an alias.
  const pause = alias(pausedStates, 'pause');
  const query = tx
    .select({
      token: pause.token,
      conversationId: pause.conversationId,
      answer: pause.resumedAnswer,
      resumeContext: pause.resumeContext,
    })
    .from(pause)
    .innerJoin(suspensions, eq(suspensions.interactionId, pause.token))
    .where(
      and(
        isNotNull(pause.resumedAt),
        eq(suspensions.resolved, false),
        skip.size ? notInArray(pause.token, [...skip]) : undefined,
      ),
    )
    .orderBy(asc(pause.resumedAt), asc(pause.token))
    .limit(1)
    .for('update', { of: pause, skipLocked: true });
  // The usual claim (nothing to skip) is a named prepared statement: one round trip
  // instead of postgres.js's Describe + Execute. A skip list changes the SQL text, and a
  // name must always stand for one text, so that rarer claim stays unnamed.
  const rows = await (skip.size === 0 ? query.prepare('runner_claim_answered').execute() : query);
  const row = rows[0];
  if (!row) return undefined;
  const context = row.resumeContext as { model?: unknown } | null;
  return {
    token: row.token,
    conversationId: row.conversationId,
    answer: resumeAnswerSchema.parse(row.answer),
    modelId: typeof context?.model === 'string' ? context.model : '',
  };
}
