import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AnswerResponse,
  ApprovalCenterError,
  type AuditResponse,
  answererOf,
  answerSchemasWith,
  type BatchResponse,
  type Caller,
  type ContextResponse,
  type EventHub,
  type NotificationResponse,
  type NotificationsResponse,
  type PauseResponse,
  type PausesResponse,
  type RecentResponse,
  readOnlyReason,
  requireAdmin,
  type StopResponse,
  stopBodySchema,
} from '@x/approval-center';
import { checkWrite, readJson, sendJson } from '@x/approval-center/http';
import { AskUserError, exportAudit, type Pending } from '@x/askuser';
import { assertSafeId } from '@x/continuation';
import { unstorableText } from '@x/postgres-kit';
import { z } from 'zod';
import {
  AlreadyAnsweredError,
  answer,
  answerBatch,
  answerContentProblem,
  quorumText,
  refusal,
  refuseAnswerer,
  stopKnownConversation,
} from '../executive/index.js';
import type { Storage } from '../storage/index.js';
import {
  NOTIFICATION_STATUSES,
  notificationView,
  retryNotification,
} from '../storage/notifications.js';
import { type RunsContext, runRoutes } from './api-runs.js';
import { contextView } from './question-context.js';
import { approvalsOf, pauseView, recentViews } from './views.js';

const MAX_LIMIT = 1000;

/** An answer's content: at most {@link MAX_ANSWER_CHARS}, as everywhere an answer enters. */
const contentSchema = z.string().superRefine((content, ctx) => {
  const problem = answerContentProblem(content);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `the content ${problem}` });
});

/** The contract's answer bodies, with the runner's limit on `content`. */
const answerSchemas = answerSchemasWith(contentSchema);

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

function limitOf(url: URL, fallback: number): number {
  const text = url.searchParams.get('limit');
  if (text === null) return fallback;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new ApprovalCenterError(
      'invalid_request',
      `limit takes a whole number from 1 to ${MAX_LIMIT}`,
    );
  }
  return limit;
}

/**
 * A path segment, decoded. One that no database could hold (a NUL, a lone surrogate) names
 * nothing: 404 (`pause_not_found` for a question's token), never asked of the database.
 */
function segment(text: string, what: 'token' | 'id' = 'id'): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    throw new ApprovalCenterError('invalid_request', 'malformed percent-encoding in the path');
  }
  const unstorable = unstorableText(decoded);
  if (unstorable === undefined) return decoded;
  if (what === 'token') {
    throw new ApprovalCenterError(
      'pause_not_found',
      `no question has the token ${JSON.stringify(decoded)}: it holds ${unstorable}, which no token does`,
      { details: { tokens: [decoded] } },
    );
  }
  throw new ApprovalCenterError(
    'not_found',
    `nothing is named ${JSON.stringify(decoded)}: it holds ${unstorable}`,
  );
}

/** `GET /api/audit`'s `?conversation=C&since=ISO-TIME&after=ID`, checked. */
function auditQuery(url: URL, limit: number) {
  const conversationId = url.searchParams.get('conversation') ?? undefined;
  const sinceText = url.searchParams.get('since');
  const after = url.searchParams.get('after') ?? undefined;
  const since = sinceText === null ? undefined : new Date(sinceText);
  if (since !== undefined && Number.isNaN(since.getTime())) {
    throw new ApprovalCenterError(
      'invalid_request',
      'since takes a time like 2026-01-31T12:00:00Z',
    );
  }
  if (after !== undefined && !/^\d{1,19}$/.test(after)) {
    throw new ApprovalCenterError('invalid_request', "after takes an entry's id, as next gives it");
  }
  return { conversationId, since, after, limit };
}

/** Turns the store's typed errors into HTTP errors; anything else is passed on. */
function storeError(error: unknown): unknown {
  if (error instanceof AlreadyAnsweredError) {
    // Who answered, how and when: the second answerer learns what the first decided.
    const answered = error.answered.map((p) => ({
      token: p.token,
      answer: p.answer,
      answeredBy: p.answeredBy,
      answeredAt: p.resumedAt.toISOString(),
    }));
    return new ApprovalCenterError('already_answered', error.message, {
      details: { answered },
      cause: error,
    });
  }
  if (AskUserError.hasCode(error, 'not_found')) {
    return new ApprovalCenterError('pause_not_found', error.message, {
      details: { tokens: error.tokens },
      cause: error,
    });
  }
  if (AskUserError.hasCode(error, 'invalid_answer'))
    return new ApprovalCenterError('invalid_answer', error.message, { cause: error });
  return error;
}

/** What the API routes need. */
export interface ApiContext extends RunsContext {
  storage: Storage;
  hub: EventHub;
  /** Who sent this request: answers go through the store as theirs. */
  caller: Caller;
  /** Called after a write that may have answered pauses (wakes this process's wake loop). */
  answered(): void;
}

type Route = {
  method: 'GET' | 'POST';
  pattern: RegExp;
  handle: (
    ctx: ApiContext,
    match: string[],
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
  ) => Promise<void>;
};

/**
 * The pending questions the caller sees, at most `limit`, in the store's FIFO order: an admin
 * and a viewer the first ones of all; an operator those they may answer first (so others'
 * questions never crowd theirs out), then the first of the rest, which they read only.
 */
async function pendingFor(ctx: ApiContext, limit: number): Promise<Pending[]> {
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

const routes: Route[] = [
  {
    method: 'GET',
    pattern: /^\/api\/pauses$/,
    async handle(ctx, _m, _req, res, url) {
      const pending = await pendingFor(ctx, limitOf(url, 100));
      const now = Date.now();
      const approvals = await approvalsOf(ctx.storage, pending);
      sendJson(res, 200, {
        pauses: pending.map((p) =>
          pauseView(p, now, readOnlyReason(ctx.caller, p), approvals.get(p.token)),
        ),
      } satisfies PausesResponse);
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/pauses\/answer-batch$/,
    async handle(ctx, _m, req, res) {
      checkWrite(req);
      const by = answererOf(ctx.caller, refuseAnswerer);
      // Every string is checked below: a token no database holds is 404, like in the path.
      const body = await readJson(req, undefined, { unstorable: 'keep' });
      const { answers } = parseBody(answerSchemas.batch, body, 'invalid_answer');
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
      const answered = await answerBatch(
        ctx.storage,
        answers.map(({ token, action, content }) => ({ token, answer: { action, content } })),
        by,
      ).catch((error) => Promise.reject(storeError(error)));
      ctx.answered();
      sendJson(res, 200, {
        answered,
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
        .getByToken(segment(token, 'token'))
        .catch((error) => refusal(ctx.storage, error))
        .catch((error) => Promise.reject(storeError(error)));
      const approvals = await approvalsOf(ctx.storage, [pause]);
      sendJson(res, 200, {
        pause: pauseView(
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
      const context = await contextView(ctx.storage, segment(token, 'token')).catch((error) =>
        Promise.reject(storeError(error)),
      );
      sendJson(res, 200, { context } satisfies ContextResponse);
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/pauses\/([^/]+)\/answer$/,
    async handle(ctx, [raw = ''], req, res) {
      checkWrite(req);
      const by = answererOf(ctx.caller, refuseAnswerer);
      const token = segment(raw, 'token');
      const given = parseBody(answerSchemas.answer, await readJson(req), 'invalid_answer');
      const outcome = await answer(ctx.storage, token, given, by).catch((error) =>
        Promise.reject(storeError(error)),
      );
      ctx.answered();
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
      const recent = await recentViews(ctx.storage, limitOf(url, 50));
      sendJson(res, 200, { recent } satisfies RecentResponse);
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/conversations\/([^/]+)\/stop$/,
    async handle(ctx, [raw = ''], req, res) {
      checkWrite(req);
      // Stopping closes every question of the conversation, whatever their audiences.
      requireAdmin(ctx.caller, 'stop a conversation');
      parseBody(stopBodySchema, await readJson(req), 'invalid_request');
      const conversationId = segment(raw);
      // The id a person or script typed: refused like at the command line, never looked up.
      try {
        assertSafeId('conversation id', conversationId);
      } catch (error) {
        throw new ApprovalCenterError('invalid_request', (error as Error).message, {
          cause: error,
        });
      }
      const closed = await stopKnownConversation(ctx.storage, conversationId);
      ctx.answered();
      sendJson(res, 200, { conversationId, ...closed } satisfies StopResponse);
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/audit$/,
    async handle(ctx, _m, _req, res, url) {
      requireAdmin(ctx.caller, 'read the audit log');
      const limit = limitOf(url, 100);
      const entries = [];
      for await (const entry of exportAudit(ctx.storage.db, auditQuery(url, limit))) {
        entries.push({ ...entry, at: entry.at.toISOString() });
      }
      sendJson(res, 200, {
        entries,
        next: entries.length === limit ? (entries.at(-1)?.id ?? null) : null,
      } satisfies AuditResponse);
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/notifications$/,
    async handle(ctx, _m, _req, res, url) {
      requireAdmin(ctx.caller, 'read the notifications');
      const status = url.searchParams.get('status') ?? undefined;
      const known = NOTIFICATION_STATUSES.find((s) => s === status);
      if (status !== undefined && !known) {
        throw new ApprovalCenterError(
          'invalid_request',
          `status takes ${NOTIFICATION_STATUSES.join(', ')}`,
        );
      }
      const before = url.searchParams.get('before') ?? undefined;
      if (before !== undefined && (before === '' || before.length > 200)) {
        throw new ApprovalCenterError('invalid_request', 'before takes the id of a notification');
      }
      const limit = limitOf(url, 100);
      const found = await ctx.storage
        .notifications()
        .list({ ...(known ? { status: known } : {}), ...(before ? { before } : {}), limit });
      sendJson(res, 200, {
        notifications: found.map(notificationView),
        next: found.length === limit ? (found.at(-1)?.id ?? null) : null,
      } satisfies NotificationsResponse);
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/notifications\/([^/]+)\/retry$/,
    async handle(ctx, [id = ''], req, res) {
      checkWrite(req);
      requireAdmin(ctx.caller, 'send a notification again');
      const again = await retryNotification(ctx.storage.notifications(), segment(id));
      sendJson(res, 200, { notification: notificationView(again) } satisfies NotificationResponse);
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

/** Serves one `/api/...` request; throws an `ApprovalCenterError` (or a store failure) on error. */
export async function handleApi(
  ctx: ApiContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const matching = [...routes, ...(runRoutes as Route[])]
    .map((route) => ({ route, match: route.pattern.exec(url.pathname) }))
    .filter((r) => r.match !== null);
  if (matching.length === 0)
    throw new ApprovalCenterError('not_found', `no API route ${url.pathname}`);
  // A query no database could take (a NUL, a lone surrogate) is refused before it reaches one.
  for (const [name, value] of url.searchParams) {
    const unstorable = unstorableText(value) ?? unstorableText(name);
    if (unstorable !== undefined) {
      throw new ApprovalCenterError(
        'invalid_request',
        `the query parameter ${JSON.stringify(name)} holds ${unstorable}, which cannot be stored`,
      );
    }
  }
  const hit = matching.find((r) => r.route.method === req.method);
  if (!hit) {
    const allowed = [...new Set(matching.map((r) => r.route.method))].join(', ');
    res.setHeader('allow', allowed);
    throw new ApprovalCenterError(
      'method_not_allowed',
      `${req.method} is not allowed here; use ${allowed}`,
    );
  }
  await hit.route.handle(ctx, hit.match?.slice(1) ?? [], req, res, url);
}
