import type { IncomingMessage, ServerResponse } from 'node:http';
import { AskUserError, type Pending } from '@x/askuser';
import { ExecutiveError, quorumText, withoutOrigin } from '@x/executive';
import { unstorableText } from '@x/postgres-kit';
import { z } from 'zod';
import {
  type AnswerResponse,
  answerSchemasWith,
  type BatchResponse,
  type ContextResponse,
  type PauseResponse,
  type PausesResponse,
  type RecentResponse,
  type StopResponse,
  stopBodySchema,
} from '../contract/index.js';
import { ApprovalCenterError, type ApprovalCenterErrorCode } from '../errors.js';
import { readJson } from '../http/body.js';
import { checkWrite } from '../http/checks.js';
import { answerRoute, limitOf, pathSegment, type Route } from '../http/routes.js';
import { sendJson } from '../http/send.js';
import { answererOf, type Caller, readOnlyReason, requireAdmin } from '../identity/callers.js';
import { checkCsrf } from '../identity/sign-ins.js';
import type { EventHub } from '../live/event-hub.js';
import { contextView } from './context.js';
import type { QuestionFlows, QuestionsOptions } from './options.js';
import { approvalsOf, pauseView, recentViews } from './views.js';

/** What the question routes act with: the center's questions, and who sent the request. */
export interface QuestionContext
  extends Omit<QuestionsOptions, 'flows' | 'hub' | 'refuseAnswerer'> {
  flows: QuestionFlows;
  hub: EventHub;
  refuseAnswerer?: ((message: string) => never) | undefined;
  caller: Caller;
}

/** The executive's and the store's typed refusals as the API's; anything else is passed on. */
function storeError(error: unknown): unknown {
  if (ExecutiveError.hasCode(error, 'already_answered')) {
    // Who answered, how and when: the second answerer learns what the first decided.
    const answered = error.answered.map((p) => ({
      token: p.token,
      answer: p.answer,
      answeredBy: p.answeredBy,
      answeredAt: p.resumedAt.toISOString(),
    }));
    return new ApprovalCenterError('already_answered', withoutOrigin(error.message), {
      details: { answered },
      cause: error,
    });
  }
  if (AskUserError.hasCode(error, 'not_found') || ExecutiveError.hasCode(error, 'not_found')) {
    return new ApprovalCenterError('pause_not_found', withoutOrigin(error.message), {
      details: { tokens: error.tokens },
      cause: error,
    });
  }
  if (AskUserError.hasCode(error, 'invalid_answer'))
    return new ApprovalCenterError('invalid_answer', error.message, { cause: error });
  if (ExecutiveError.is(error)) {
    const code = EXECUTIVE_CODES[error.code];
    if (code) return new ApprovalCenterError(code, withoutOrigin(error.message), { cause: error });
  }
  return error;
}

/** The executive's refusals of the caller's doing, as the API answers them. */
const EXECUTIVE_CODES: Partial<Record<ExecutiveError['code'], ApprovalCenterErrorCode>> = {
  forbidden: 'forbidden',
  expired: 'expired',
  usage: 'invalid_request',
  conflict: 'conflict',
};

function parseBody<T>(
  schema: z.ZodType<T>,
  body: unknown,
  code: 'invalid_answer' | 'invalid_request',
): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new ApprovalCenterError(
    code,
    `invalid body: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`,
  );
}

/** The contract's answer bodies, with the host's limit on `content`. */
function answerSchemasOf(ctx: QuestionContext) {
  const problemOf = ctx.contentProblem;
  if (!problemOf) return answerSchemasWith();
  return answerSchemasWith(
    z.string().superRefine((content, check) => {
      const problem = problemOf(content);
      if (problem !== undefined)
        check.addIssue({ code: 'custom', message: `the content ${problem}` });
    }),
  );
}

/**
 * A write checked before it is read: JSON from this page's origin, and the CSRF token of the
 * app's sign-in when its `authenticate` gave one.
 */
function checkQuestionWrite(ctx: QuestionContext, req: IncomingMessage): void {
  if (ctx.caller.csrfToken !== undefined) checkCsrf(req, { csrfToken: ctx.caller.csrfToken });
  checkWrite(req);
}

/**
 * The pending questions the caller sees, at most `limit`, in the store's FIFO order: an admin
 * and a viewer the first ones of all; an operator those they may answer first (so others'
 * questions never crowd theirs out), then the first of the rest, which they read only.
 */
async function pendingFor(ctx: QuestionContext, limit: number): Promise<Pending[]> {
  const pauses = ctx.storage.pauses();
  const { identity, access } = ctx.caller;
  if (!identity || access !== 'operator') return pauses.listPendingAll(limit);
  const answerable = await pauses.listAnswerable(identity, limit);
  const theirs = new Set(answerable.map((p) => p.token));
  const others = (await pauses.listPendingAll(limit)).filter((p) => !theirs.has(p.token));
  return [...answerable, ...others.slice(0, limit - answerable.length)].sort(
    (a, b) =>
      b.priority - a.priority ||
      a.createdAt.getTime() - b.createdAt.getTime() ||
      (a.token < b.token ? -1 : a.token > b.token ? 1 : 0),
  );
}

/** After a write that may have answered questions: the live feed and the host look again. */
function answered(ctx: QuestionContext): void {
  ctx.hub.poke();
  ctx.answered?.();
}

const routes: Route<QuestionContext>[] = [
  {
    method: 'GET',
    pattern: /^\/api\/pauses$/,
    async handle(ctx, _m, _req, res, url) {
      const pending = await pendingFor(ctx, limitOf(url, 100));
      const now = Date.now();
      const approvals = await approvalsOf(ctx.storage, pending);
      sendJson(res, 200, {
        pauses: pending.map((p) =>
          pauseView(ctx, p, now, readOnlyReason(ctx.caller, p), approvals.get(p.token)),
        ),
      } satisfies PausesResponse);
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/pauses\/answer-batch$/,
    async handle(ctx, _m, req, res) {
      checkQuestionWrite(ctx, req);
      const by = answererOf(ctx.caller, ctx.refuseAnswerer);
      // Every string is checked below: a token no database holds is 404, like in the path.
      const body = await readJson(req, undefined, { unstorable: 'keep' });
      const { answers } = parseBody(answerSchemasOf(ctx).batch, body, 'invalid_answer');
      const unknown = answers.map((a) => a.token).filter((t) => unstorableText(t) !== undefined);
      if (unknown.length > 0) {
        throw new ApprovalCenterError(
          'pause_not_found',
          `batch not applied, nothing was answered: no question has the token ${unknown
            .map((t) => JSON.stringify(t))
            .join(
              ', ',
            )}: ${unknown.length === 1 ? 'it holds' : 'they hold'} a character no token does (a NUL or a lone surrogate)`,
          { details: { tokens: unknown } },
        );
      }
      const count = await ctx.flows
        .answerBatch(
          answers.map(({ token, action, content }) => ({ token, answer: { action, content } })),
          by,
        )
        .catch((error) => Promise.reject(storeError(error)));
      answered(ctx);
      sendJson(res, 200, {
        answered: count,
        tokens: answers.map((a) => a.token),
      } satisfies BatchResponse);
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/pauses\/([^/]+)$/,
    async handle(ctx, [token = ''], _req, res) {
      // An answered question's token says who answered it and when (409), not just 404.
      const pause = await ctx.storage
        .pauses()
        .getByToken(pathSegment(token, 'token'))
        .catch((error) => ctx.flows.refusal(error))
        .catch((error) => Promise.reject(storeError(error)));
      const approvals = await approvalsOf(ctx.storage, [pause]);
      sendJson(res, 200, {
        pause: pauseView(
          ctx,
          pause,
          Date.now(),
          readOnlyReason(ctx.caller, pause),
          approvals.get(pause.token),
        ),
      } satisfies PauseResponse);
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/pauses\/([^/]+)\/context$/,
    async handle(ctx, [token = ''], _req, res) {
      const context = await contextView(ctx, pathSegment(token, 'token')).catch((error) =>
        Promise.reject(storeError(error)),
      );
      sendJson(res, 200, { context } satisfies ContextResponse);
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/pauses\/([^/]+)\/answer$/,
    async handle(ctx, [raw = ''], req, res) {
      checkQuestionWrite(ctx, req);
      const by = answererOf(ctx.caller, ctx.refuseAnswerer);
      const token = pathSegment(raw, 'token');
      const given = parseBody(answerSchemasOf(ctx).answer, await readJson(req), 'invalid_answer');
      const outcome = await ctx.flows
        .answer(token, given, by)
        .catch((error) => Promise.reject(storeError(error)));
      answered(ctx);
      const partial = quorumText(outcome);
      const q = outcome.quorum;
      sendJson(res, 200, {
        token,
        answer: given,
        ...(partial && q
          ? {
              recorded: {
                message: partial,
                counted: q.counted,
                approvals: q.approvals,
                declines: q.declines,
                needed: q.needed,
                remaining: q.needed - q.approvals.length,
              },
            }
          : {}),
      } satisfies AnswerResponse);
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/recent$/,
    async handle(ctx, _m, _req, res, url) {
      const recent = await recentViews(ctx, limitOf(url, 50));
      sendJson(res, 200, { recent } satisfies RecentResponse);
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/conversations\/([^/]+)\/stop$/,
    async handle(ctx, [raw = ''], req, res) {
      checkQuestionWrite(ctx, req);
      // Stopping closes every question of the conversation, whatever their audiences.
      requireAdmin(ctx.caller, 'stop a conversation');
      parseBody(stopBodySchema, await readJson(req), 'invalid_request');
      const conversationId = pathSegment(raw);
      const closed = await ctx.flows
        .stop(conversationId)
        .catch((error) => Promise.reject(storeError(error)));
      answered(ctx);
      sendJson(res, 200, { conversationId, ...closed } satisfies StopResponse);
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/events$/,
    async handle(ctx, _m, _req, res) {
      // The stream ends when what signed it in stops signing in (revoked, signed out, expired).
      await ctx.hub.subscribe(res, ctx.caller.credential);
    },
  },
];

/**
 * Answers one of the question API's routes as `ctx.caller`.
 * @returns false for a path none of them serves.
 */
export function answerQuestionRoute(
  ctx: QuestionContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  return answerRoute(routes, ctx, req, res, url);
}

/** True when `pathname` is one of the question API's routes. */
export function isQuestionPath(pathname: string): boolean {
  return routes.some((route) => route.pattern.test(pathname));
}
