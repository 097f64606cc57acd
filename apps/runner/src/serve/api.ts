import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ApprovalCenterError,
  type AuditResponse,
  type Caller,
  type NotificationResponse,
  type NotificationsResponse,
  requireAdmin,
} from '@x/approval-center';
import {
  answerRoute,
  checkWrite,
  limitOf,
  pathSegment,
  type Route,
  sendJson,
} from '@x/approval-center/http';
import { exportAudit } from '@x/askuser';
import type { Storage } from '../storage/index.js';
import {
  NOTIFICATION_STATUSES,
  notificationView,
  retryNotification,
} from '../storage/notifications.js';
import { type RunsContext, runRoutes } from './api-runs.js';

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

/** What the runner's own API routes need (the question API is the approval center's). */
export interface ApiContext extends RunsContext {
  storage: Storage;
  /** Who sent this request. */
  caller: Caller;
}

const routes: Route<ApiContext>[] = [
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
      const again = await retryNotification(ctx.storage.notifications(), pathSegment(id));
      sendJson(res, 200, { notification: notificationView(again) } satisfies NotificationResponse);
    },
  },
];

/**
 * Serves one of the runner's own `/api/...` routes (the audit log, the notifications, the
 * runs); throws an `ApprovalCenterError` (or a store failure) on error, `not_found` for a path
 * none of them serves.
 */
export async function handleApi(
  ctx: ApiContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  if (await answerRoute([...routes, ...runRoutes], ctx, req, res, url)) return;
  throw new ApprovalCenterError('not_found', `no API route ${url.pathname}`);
}
