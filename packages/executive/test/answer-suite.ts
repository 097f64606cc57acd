import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { type AuditEntry, exportAudit } from '@x/askuser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  answerBatch,
  ExecutiveError,
  type ExecutiveErrorCode,
  type FlowContext,
  type GatedTools,
  migrate,
  outboxEvents,
  type QuestionPolicy,
  type SuspendedTurn,
  sqlExecutiveStorage,
  suspendNewRun,
} from '../src/index.js';
import { askingTurn, fresh } from './flows-suite.js';

const AUDIT_KEY = 'an audit key of the answer tests';
const accept = (content = 'Kyoto') => ({ action: 'accept' as const, content });
const ada = { identity: { name: 'ada', roles: ['finance'] } };
const bob = { identity: { name: 'bob', roles: ['finance'] } };

/** A rejection's executive code, or what it was instead. */
async function refusedAs(promise: Promise<unknown>): Promise<ExecutiveErrorCode | string> {
  const error = await promise.then(
    () => 'answered',
    (error: unknown) => error,
  );
  return ExecutiveError.is(error) ? error.code : String(error);
}

/** A gated tool whose edits are checked against its schema (an amount, a number). */
const gatedTools: GatedTools = {
  pay: {
    description: 'Pays an amount',
    input: z.object({ amount: z.number() }),
    run: async () => 'paid',
  },
};

/**
 * Registers the answer flow's tests on one target kind, through the package's public API:
 * a plain flow (no audit log, no event wanted: the one-flight answer) and an audited one
 * (its audit entries and `question.answered` events in the answer's transaction).
 */
export async function describeAnswersOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`answer and answerBatch on ${spec.kind}`, () => {
      let target: SqlTarget;
      let plain: FlowContext;
      let audited: FlowContext;
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        const storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
        plain = {
          storage,
          events: outboxEvents(storage, { channels: () => [], wants: () => false }),
        };
        const withAudit = sqlExecutiveStorage(target.db, {
          queue: { synchronousClaim: true },
          auditKey: () => AUDIT_KEY,
        });
        const answers = (k: string) => k === 'question.answered' || k === 'question.cancelled';
        const events = outboxEvents(withAudit, {
          channels: (event) => (answers(event.kind) ? ['webhook'] : []),
          wants: answers,
        });
        audited = { storage: withAudit, events };
      });
      afterAll(() => target?.close());

      /** A new run waiting on one question asked under `policy`, as `requester` asks it. */
      async function asked(
        flow: FlowContext,
        policy?: QuestionPolicy,
        requester?: string,
        turn: SuspendedTurn = askingTurn(),
      ) {
        const token = fresh('q');
        const run = {
          runId: fresh('r'),
          conversationId: fresh('c'),
          ...(requester ? { requester } : {}),
        };
        await suspendNewRun(flow, run, { id: 'm' }, turn, {}, token, policy);
        return { token, runId: run.runId, conversationId: run.conversationId };
      }

      const statusOf = async (flow: FlowContext, runId: string) =>
        (await flow.storage.runs().get(runId))?.status;
      const pending = (flow: FlowContext, conversationId: string) =>
        flow.storage.pauses().listPending(conversationId);
      async function auditOf(conversationId: string): Promise<AuditEntry['kind'][]> {
        const kinds: AuditEntry['kind'][] = [];
        for await (const entry of exportAudit(target.db, { conversationId }))
          kinds.push(entry.kind);
        return kinds;
      }
      async function eventsOf(flow: FlowContext, token: string) {
        return (await flow.storage.notifications().list()).filter(
          (n) => (n.payload as { data?: { token?: string } }).data?.token === token,
        );
      }

      describe('answer', () => {
        it('records the answer and makes its run ready (the one-flight answer)', async () => {
          const q = await asked(plain);
          const outcome = await answer(plain, q.token, accept(), { answeredBy: 'ada' });
          expect(outcome.resolved).toBe(true);
          expect(await statusOf(plain, q.runId)).toBe('ready');
          expect((await plain.storage.pauses().getAnswer(q.token))?.answeredBy).toBe('ada');
        });

        it('writes its audit entry and its event in the same transaction, the run made ready', async () => {
          const q = await asked(audited);
          await answer(audited, q.token, accept(), { ...ada, channel: 'api' });
          expect(await statusOf(audited, q.runId)).toBe('ready');
          expect(await auditOf(q.conversationId)).toEqual([
            'question-created',
            'question-answered',
          ]);
          const sent = await eventsOf(audited, q.token);
          expect(sent.map((n) => n.kind)).toEqual(['question.answered']);
          expect(sent[0]?.payload).toMatchObject({ data: { channel: 'api' } });
        });

        it('refuses a token no question has as not_found, naming it', async () => {
          const token = fresh('unknown');
          const error = await answer(plain, token, accept()).catch((e: unknown) => e);
          expect(ExecutiveError.hasCode(error, 'not_found')).toBe(true);
          expect((error as ExecutiveError).tokens).toEqual([token]);
        });

        it('refuses a second answer as already_answered, saying how, by whom and when', async () => {
          for (const flow of [plain, audited]) {
            const q = await asked(flow);
            await answer(flow, q.token, accept(), ada);
            const error = await answer(flow, q.token, accept('Osaka'), bob).catch((e) => e);
            expect(ExecutiveError.hasCode(error, 'already_answered')).toBe(true);
            const [first] = (error as ExecutiveError).answered;
            expect(first).toMatchObject({ token: q.token, answer: accept(), answeredBy: 'ada' });
            expect(first?.resumedAt).toBeInstanceOf(Date);
          }
        });

        it('refuses an identity outside the audience as forbidden, keeping the refusal in the audit log', async () => {
          const policy: QuestionPolicy = () => ({ audience: ['finance'] });
          const q = await asked(audited, policy);
          const cy = { identity: { name: 'cy', roles: ['support'] } };
          expect(await refusedAs(answer(audited, q.token, accept(), cy))).toBe('forbidden');
          expect(await pending(audited, q.conversationId)).toHaveLength(1);
          expect(await statusOf(audited, q.runId)).toBe('waiting');
          expect(await auditOf(q.conversationId)).toEqual(['question-created', 'answer-refused']);
          await answer(audited, q.token, accept(), ada);
          expect(await statusOf(audited, q.runId)).toBe('ready');
        });

        it('refuses the requester where the requester may not approve (separation of duties)', async () => {
          const policy: QuestionPolicy = () => ({ requesterMayNotApprove: true });
          for (const flow of [plain, audited]) {
            const q = await asked(flow, policy, 'ada');
            expect(await refusedAs(answer(flow, q.token, accept(), ada))).toBe('forbidden');
            expect(await statusOf(flow, q.runId)).toBe('waiting');
            await answer(flow, q.token, accept(), bob);
            expect(await statusOf(flow, q.runId)).toBe('ready');
          }
        });

        it('refuses an answer after the deadline as expired, the question left to its default', async () => {
          const policy: QuestionPolicy = () => ({
            deadline: { ms: -60_000, answer: { action: 'decline', content: 'too late' } },
          });
          for (const flow of [plain, audited]) {
            const q = await asked(flow, policy);
            expect(await refusedAs(answer(flow, q.token, accept(), ada))).toBe('expired');
            expect(await statusOf(flow, q.runId)).toBe('waiting');
          }
        });

        it('waits for a quorum: each approval is recorded, the last one readies the run once', async () => {
          const policy: QuestionPolicy = () => ({ quorum: { approvals: 2, declines: 1 } });
          for (const flow of [plain, audited]) {
            const q = await asked(flow, policy);
            const first = await answer(flow, q.token, accept(''), ada);
            expect(first).toMatchObject({ resolved: false, quorum: { approvals: ['ada'] } });
            const again = await answer(flow, q.token, accept(''), ada);
            expect(again).toMatchObject({ resolved: false, quorum: { counted: false } });
            expect(await statusOf(flow, q.runId)).toBe('waiting');
            const last = await answer(flow, q.token, accept(''), bob);
            expect(last.resolved).toBe(true);
            expect(await statusOf(flow, q.runId)).toBe('ready');
            expect(await refusedAs(answer(flow, q.token, accept(''), ada))).toBe(
              'already_answered',
            );
          }
        });

        it('writes nothing when a write of its transaction fails (all or nothing)', async () => {
          const q = await asked(plain);
          const failing: FlowContext = {
            storage: plain.storage,
            events: {
              wants: () => true,
              record: async () => {
                throw new Error('the outbox is full');
              },
            },
          };
          await expect(answer(failing, q.token, accept(), ada)).rejects.toThrow(
            'the outbox is full',
          );
          expect(await pending(plain, q.conversationId)).toHaveLength(1);
          expect(await statusOf(plain, q.runId)).toBe('waiting');
          const also = async () => {
            throw new Error('the link was used');
          };
          await expect(answer(plain, q.token, accept(), ada, { also })).rejects.toThrow(
            'the link was used',
          );
          expect(await statusOf(plain, q.runId)).toBe('waiting');
        });

        it('has exactly one winner when two answers race', async () => {
          for (const flow of [plain, audited]) {
            const q = await asked(flow);
            const results = await Promise.all([
              refusedAs(answer(flow, q.token, accept('Kyoto'), ada)),
              refusedAs(answer(flow, q.token, accept('Osaka'), bob)),
            ]);
            expect(results.sort()).toEqual(['already_answered', 'answered']);
            expect(await statusOf(flow, q.runId)).toBe('ready');
          }
        });

        it("records an accepted gated call's edit in one form, and refuses one that does not fit", async () => {
          const turn = askingTurn('Pay 10?');
          const gated = { tool: 'pay', arguments: { amount: 10 } };
          const approve = { ...turn, question: { ...turn.question, gated } };
          for (const flow of [plain, audited]) {
            const q = await asked(flow, undefined, undefined, approve);
            const bad = answer(flow, q.token, accept('{"amount":"ten"}'), ada, { gatedTools });
            expect(await refusedAs(bad)).toBe('usage');
            expect(await statusOf(flow, q.runId)).toBe('waiting');
            await answer(flow, q.token, accept(' { "amount" : 12 } '), ada, { gatedTools });
            const recorded = await flow.storage.pauses().getAnswer(q.token);
            expect(recorded?.answer).toEqual(accept('{"amount":12}'));
          }
        });
      });

      describe('answerBatch', () => {
        it('answers every question and readies every run in one transaction', async () => {
          for (const flow of [plain, audited]) {
            const [a, b] = [await asked(flow), await asked(flow)];
            if (!a || !b) throw new Error('two questions were asked');
            const done = await answerBatch(
              flow,
              [
                { token: a.token, answer: accept() },
                { token: b.token, answer: { action: 'decline', content: 'no' } },
              ],
              ada,
            );
            expect(done.answered).toBe(2);
            expect(done.questions.map((q) => q.token).sort()).toEqual([a.token, b.token].sort());
            expect([await statusOf(flow, a.runId), await statusOf(flow, b.runId)]).toEqual([
              'ready',
              'ready',
            ]);
          }
          const c = await asked(audited);
          await answerBatch(audited, [{ token: c.token, answer: accept() }], ada);
          expect((await eventsOf(audited, c.token)).map((n) => n.kind)).toEqual([
            'question.answered',
          ]);
        });

        it('records a quorum approval in a batch, readying only the runs it resolved', async () => {
          const policy: QuestionPolicy = () => ({ quorum: { approvals: 2, declines: 1 } });
          for (const flow of [plain, audited]) {
            const [voted, plainly] = [await asked(flow, policy), await asked(flow)];
            if (!voted || !plainly) throw new Error('two questions were asked');
            const done = await answerBatch(
              flow,
              [
                { token: voted.token, answer: accept('') },
                { token: plainly.token, answer: accept() },
              ],
              ada,
            );
            expect(done.answered).toBe(2);
            expect(done.questions.map((q) => q.token)).toEqual([plainly.token]);
            expect(await statusOf(flow, voted.runId)).toBe('waiting');
            expect(await statusOf(flow, plainly.runId)).toBe('ready');
            await answerBatch(flow, [{ token: voted.token, answer: accept('') }], bob);
            expect(await statusOf(flow, voted.runId)).toBe('ready');
          }
        });

        it('answers none when one was answered already, saying which', async () => {
          for (const by of [{ answeredBy: 'admin' }, ada]) {
            const [a, b] = [await asked(plain), await asked(plain)];
            if (!a || !b) throw new Error('two questions were asked');
            await answer(plain, a.token, accept(), bob);
            const error = await answerBatch(
              plain,
              [
                { token: b.token, answer: accept() },
                { token: a.token, answer: accept() },
              ],
              by,
            ).catch((e: unknown) => e);
            expect(ExecutiveError.hasCode(error, 'already_answered')).toBe(true);
            expect((error as ExecutiveError).answered.map((p) => p.token)).toEqual([a.token]);
            expect(await pending(plain, b.conversationId)).toHaveLength(1);
            expect(await statusOf(plain, b.runId)).toBe('waiting');
          }
        });

        it('answers none when one is refused to the identity, and keeps no audit entry of it', async () => {
          const policy: QuestionPolicy = () => ({ audience: ['legal'] });
          const open = await asked(audited);
          const closed = await asked(audited, policy);
          const given = [
            { token: open.token, answer: accept() },
            { token: closed.token, answer: accept() },
          ];
          expect(await refusedAs(answerBatch(audited, given, ada))).toBe('forbidden');
          expect(await statusOf(audited, open.runId)).toBe('waiting');
          expect(await auditOf(open.conversationId)).toEqual(['question-created']);
          expect(await auditOf(closed.conversationId)).toEqual(['question-created']);
        });

        it('refuses unknown tokens as not_found, answering none', async () => {
          const a = await asked(plain);
          const unknown = fresh('unknown');
          const given = [
            { token: a.token, answer: accept() },
            { token: unknown, answer: accept() },
          ];
          const error = await answerBatch(plain, given).catch((e: unknown) => e);
          expect(ExecutiveError.hasCode(error, 'not_found')).toBe(true);
          expect((error as ExecutiveError).tokens).toEqual([unknown]);
          expect(await statusOf(plain, a.runId)).toBe('waiting');
        });
      });
    });
  }
}
