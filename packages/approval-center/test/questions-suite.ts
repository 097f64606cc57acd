import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { migrate, sqlExecutiveStorage } from '@x/executive';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppOperator,
  type ContextResponse,
  CSRF_HEADER,
  createApprovalCenter,
  type ErrorResponse,
  type PausesResponse,
  type RecentResponse,
  type SessionResponse,
} from '../src/index.js';

const CSRF = 'the csrf token of ada sign-in';

/** The app's sign-in: the `x-person` header names who is signed in (the test's cookie). */
const PEOPLE: Record<string, AppOperator> = {
  ada: { name: 'ada', roles: ['operator'], csrfToken: CSRF },
  vic: { name: 'vic', roles: ['viewer'], csrfToken: 'the csrf token of vic sign-in' },
  bot: { name: 'bot', roles: ['admin'] },
};

let counter = 0;
const fresh = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

/**
 * Registers the question API's tests on one target kind: an app's own `@x/askuser` questions
 * (no executive run) served by `createApprovalCenter({ questions, authenticate })`.
 */
export async function describeQuestionsOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`the question API on ${spec.kind}`, () => {
      let target: SqlTarget;
      let server: Server;
      let base: string;
      let storage: ReturnType<typeof sqlExecutiveStorage>;
      let center: ReturnType<typeof createApprovalCenter>;
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
        center = createApprovalCenter({
          basePath: '/approvals',
          authenticate: (req) => PEOPLE[String(req.headers['x-person'])],
          questions: { storage },
        });
        server = createServer(center);
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/approvals`;
      });
      afterAll(async () => {
        await new Promise((done) => server?.close(done));
        await center?.close();
        await target?.close();
      });

      const get = (path: string, person?: string) =>
        fetch(`${base}${path}`, { headers: person ? { 'x-person': person } : {} });
      const post = (path: string, body: unknown, headers: Record<string, string>) =>
        fetch(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: new URL(base).origin, ...headers },
          body: JSON.stringify(body),
        });

      /** An app's own question, as askuser's README inserts one: no run of the executive. */
      async function asked(extra: Record<string, unknown> = {}) {
        const token = fresh('q');
        await storage.pauses().insert({
          token,
          conversationId: fresh('c'),
          kind: 'ask_user',
          question: 'Deploy to production now?',
          options: ['yes', { label: 'no', description: 'Keep the old one' }],
          toolCallId: 'call_abc',
          resumeContext: { step: 'deploy' },
          ...extra,
        });
        return token;
      }

      it('lists, shows and answers an app question, its options as given, answered after', async () => {
        const token = await asked();
        const listed = (await (await get('/api/pauses', 'ada')).json()) as PausesResponse;
        const pause = listed.pauses.find((p) => p.token === token);
        expect(pause).toMatchObject({
          options: ['yes', { label: 'no', description: 'Keep the old one' }],
          canAnswer: true,
          readOnly: null,
          gated: null,
        });
        const shown = await get(`/api/pauses/${token}/context`, 'ada');
        expect(shown.status).toBe(200);
        const { context } = (await shown.json()) as ContextResponse;
        expect(context).toMatchObject({ token, goal: null, messages: [], run: null });
        expect(context.history.map((h) => [h.token, h.status])).toEqual([[token, 'pending']]);

        const session = (await (await get('/api/session', 'ada')).json()) as SessionResponse;
        expect(session).toMatchObject({ signedIn: true, name: 'ada', signedInWith: 'app' });
        const answered = await post(
          `/api/pauses/${token}/answer`,
          { action: 'accept', content: 'yes' },
          { 'x-person': 'ada', [CSRF_HEADER]: session.csrfToken ?? '' },
        );
        expect(answered.status).toBe(200);
        expect((await storage.pauses().getAnswer(token))?.answeredBy).toBe('ada');
        const { recent } = (await (await get('/api/recent', 'ada')).json()) as RecentResponse;
        expect(recent.find((r) => r.token === token)).toMatchObject({
          status: 'answered',
          outcome: null,
          answer: { action: 'accept', content: 'yes' },
          answeredBy: 'ada',
        });
        const again = await get(`/api/pauses/${token}`, 'ada');
        expect(again.status).toBe(409);
        const body = (await again.json()) as ErrorResponse;
        expect(body.error.code).toBe('already_answered');
      });

      it("refuses a write without the sign-in's CSRF token, or with another, and answers nothing", async () => {
        const token = await asked();
        const without = await post(
          `/api/pauses/${token}/answer`,
          { action: 'accept', content: 'yes' },
          { 'x-person': 'ada' },
        );
        expect(without.status).toBe(403);
        const wrong = await post(
          '/api/pauses/answer-batch',
          { answers: [{ token, action: 'accept', content: 'yes' }] },
          { 'x-person': 'ada', [CSRF_HEADER]: PEOPLE.vic?.csrfToken ?? '' },
        );
        expect(wrong.status).toBe(403);
        expect(await storage.pauses().getAnswer(token)).toBeUndefined();
      });

      it('shows a viewer the questions read-only and refuses their answer', async () => {
        const token = await asked();
        const { pauses } = (await (await get('/api/pauses', 'vic')).json()) as PausesResponse;
        expect(pauses.find((p) => p.token === token)).toMatchObject({
          canAnswer: false,
          readOnly: 'viewer',
        });
        const refused = await post(
          `/api/pauses/${token}/answer`,
          { action: 'accept', content: 'yes' },
          { 'x-person': 'vic', [CSRF_HEADER]: PEOPLE.vic?.csrfToken ?? '' },
        );
        expect(refused.status).toBe(403);
        expect(await storage.pauses().getAnswer(token)).toBeUndefined();
      });

      it('answers nobody the app does not know: 401, and a signed-out session', async () => {
        expect((await get('/api/pauses')).status).toBe(401);
        expect((await get('/api/recent')).status).toBe(401);
        const session = (await (await get('/api/session')).json()) as SessionResponse;
        expect(session).toMatchObject({ signedIn: false, csrfToken: null });
      });

      it('takes the writes of a sign-in that gave no CSRF token (no cookie) without one', async () => {
        const token = await asked();
        const declined = await post(
          `/api/pauses/${token}/answer`,
          { action: 'decline' },
          {
            'x-person': 'bot',
          },
        );
        expect(declined.status).toBe(200);
        expect((await storage.pauses().getAnswer(token))?.answer.action).toBe('decline');
      });

      it('says when the asking kind cannot run the call with edited arguments', async () => {
        const fixed = await asked({ kind: 'approve', resumeContext: { fixedArguments: true } });
        const editable = await asked({ kind: 'approve', resumeContext: { model: 'scripted' } });
        const { pauses } = (await (await get('/api/pauses', 'bot')).json()) as PausesResponse;
        expect(pauses.find((p) => p.token === fixed)?.fixedArguments).toBe(true);
        expect(pauses.find((p) => p.token === editable)?.fixedArguments).toBeUndefined();
      });
    });
  }
}
