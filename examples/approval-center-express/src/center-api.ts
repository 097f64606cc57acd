// The approval center's API, as little of it as the page needs to list, show and answer
// questions. The package serves the page, sign-in and live feed helpers, but its question
// routes are still `runner serve`'s (issue 48 item 1 moves them in); once
// `createApprovalCenter` answers them itself, this file goes and the app passes its storage.
import type { IncomingMessage } from 'node:http';
import {
  type AnswerResponse,
  ApprovalCenterError,
  answerBodySchema,
  type CenterRoutes,
  type ContextResponse,
  CSRF_HEADER,
  EventHub,
  type GatedView,
  type LiveSnapshot,
  type PausesResponse,
  type PauseView,
  type RecentResponse,
  type RecentView,
  type SessionResponse,
  sameSecret,
} from '@x/approval-center';
import { checkWrite, readJson, sendJson } from '@x/approval-center/http';
import { type PauseRecord, type Pending, shownOptions } from '@x/askuser';
import {
  answer,
  ExecutiveError,
  type FlowContext,
  type GatedTools,
  gatedInputSchema,
  isGatedTool,
} from '@x/executive';

/** What the API needs of the app. */
export interface CenterApiOptions {
  flow: FlowContext;
  /** The agent's gated tools: their calls are shown with their arguments' schema. */
  gated: GatedTools;
  /** The CSRF token of `req`'s sign-in in the app, which each write must carry. */
  csrfTokenOf: (req: IncomingMessage) => Promise<string | undefined>;
}

/** The question routes, and the live feed they share (`close` it with the center). */
export function centerApi(options: CenterApiOptions): { routes: CenterRoutes; hub: EventHub } {
  const { flow, gated, csrfTokenOf } = options;
  const hub = new EventHub({
    snapshot: () => liveSnapshot(flow, gated),
    pollMs: 500,
    onError: () => {},
  });
  const routes: CenterRoutes = async (req, res, url, { operator }) => {
    const path = url.pathname;
    if (!path.startsWith('/api/')) return false;
    if (req.method === 'GET' && path === '/api/session') {
      sendJson(res, 200, sessionOf(operator, await csrfTokenOf(req)));
      return true;
    }
    if (!operator) throw new ApprovalCenterError('unauthorized', 'sign in to the app first');
    if (req.method === 'GET' && path === '/api/events') {
      await hub.subscribe(res);
      return true;
    }
    if (req.method === 'GET' && path === '/api/pauses') {
      const { pending } = await liveSnapshot(flow, gated);
      // Viewers read the questions; the page shows them no answer form.
      const pauses = pending.map((p) =>
        operator.access === 'viewer' ? { ...p, canAnswer: false, readOnly: 'viewer' as const } : p,
      );
      sendJson(res, 200, { pauses } satisfies PausesResponse);
      return true;
    }
    if (req.method === 'GET' && path === '/api/recent') {
      const { recent } = await liveSnapshot(flow, gated);
      sendJson(res, 200, { recent } satisfies RecentResponse);
      return true;
    }
    const [, token, action] = /^\/api\/pauses\/([^/]+)\/(context|answer)$/.exec(path) ?? [];
    if (token === undefined) return false;
    const decoded = decodeURIComponent(token);
    if (req.method === 'GET' && action === 'context') {
      sendJson(res, 200, {
        context: await contextOf(flow, gated, decoded),
      } satisfies ContextResponse);
      return true;
    }
    if (req.method === 'POST' && action === 'answer') {
      checkCsrf(req, await csrfTokenOf(req));
      if (operator.access === 'viewer') {
        throw new ApprovalCenterError(
          'forbidden',
          `${operator.name} is a viewer: viewers read, never answer`,
        );
      }
      checkWrite(req);
      const body = answerBodySchema.safeParse(await readJson(req));
      if (!body.success) throw new ApprovalCenterError('invalid_answer', body.error.message);
      const identity = { name: operator.name, roles: operator.roles };
      await answer(
        flow,
        decoded,
        body.data,
        { identity, signedInWith: 'app' },
        { gatedTools: gated },
      ).catch(refusalOf);
      hub.poke();
      sendJson(res, 200, { token: decoded, answer: body.data } satisfies AnswerResponse);
      return true;
    }
    return false;
  };
  return { routes, hub };
}

function sessionOf(
  operator: Parameters<CenterRoutes>[3]['operator'],
  csrfToken: string | undefined,
): SessionResponse {
  return {
    signedIn: operator !== undefined,
    name: operator?.name ?? null,
    access: operator?.access ?? null,
    signedInWith: operator ? 'app' : null,
    csrfToken: operator ? (csrfToken ?? null) : null,
    expiresAt: null,
    methods: [],
  };
}

function checkCsrf(req: IncomingMessage, expected: string | undefined) {
  const given = req.headers[CSRF_HEADER];
  if (typeof given !== 'string' || expected === undefined || !sameSecret(given, expected)) {
    throw new ApprovalCenterError('forbidden', `a write must carry the sign-in's ${CSRF_HEADER}`);
  }
}

/** The executive's refusals as the API's errors. */
function refusalOf(error: unknown): never {
  if (!ExecutiveError.is(error)) throw error;
  const code =
    error.code === 'not_found'
      ? 'pause_not_found'
      : error.code === 'already_answered' || error.code === 'forbidden' || error.code === 'expired'
        ? error.code
        : 'conflict';
  throw new ApprovalCenterError(code, error.message, { cause: error });
}

/** The priority in a word, as the page shows it: `urgent` from 5, `high` from 1. */
const labelOf = (priority: number) => (priority >= 5 ? 'urgent' : priority > 0 ? 'high' : null);

function gatedView(gated: GatedTools, record: Pick<Pending, 'resumeContext'>): GatedView | null {
  const call = (
    record.resumeContext as { gated?: { tool: string; arguments: Record<string, unknown> } } | null
  )?.gated;
  if (!call || !isGatedTool(gated, call.tool)) return null;
  return { ...call, schema: gatedInputSchema(gated, call.tool) };
}

function pauseView(gated: GatedTools, pause: Pending, now: number): PauseView {
  return {
    token: pause.token,
    conversationId: pause.conversationId,
    kind: pause.kind,
    question: pause.question,
    options: shownOptions(pause.options),
    priority: pause.priority,
    priorityLabel: labelOf(pause.priority),
    proxiedFromChildId: pause.proxiedFromChildId,
    source: null,
    createdAt: pause.createdAt.toISOString(),
    ageMs: Math.max(0, now - pause.createdAt.getTime()),
    deadline: null,
    reminder: null,
    escalation: null,
    quorum: null,
    canAnswer: true,
    readOnly: null,
    gated: gatedView(gated, pause),
  };
}

function recentView(gated: GatedTools, record: PauseRecord): RecentView {
  return {
    token: record.token,
    conversationId: record.conversationId,
    kind: record.kind,
    question: record.question,
    priority: record.priority,
    priorityLabel: labelOf(record.priority),
    proxiedFromChildId: record.proxiedFromChildId,
    source: null,
    createdAt: record.createdAt.toISOString(),
    answeredAt: record.resumedAt?.toISOString() ?? null,
    answer: record.answer,
    answeredBy: record.answeredBy,
    deadline: null,
    expiredAt: null,
    status: record.resumed ? 'answered' : 'pending',
    outcome: null,
    run: null,
    quorum: null,
    gated: gatedView(gated, record),
  };
}

function liveSnapshot(flow: FlowContext, gated: GatedTools): Promise<LiveSnapshot> {
  const { storage } = flow;
  return storage.snapshot(async (tx) => {
    const now = Date.now();
    const pending = await storage.pauses(tx).listPendingAll(200);
    const recent = await storage.pauses(tx).listRecent(200);
    return {
      pending: pending.map((p) => pauseView(gated, p, now)),
      recent: recent.map((r) => recentView(gated, r)),
    };
  });
}

async function contextOf(flow: FlowContext, gated: GatedTools, token: string) {
  const [record] = (await flow.storage.pauses().listRecent(200)).filter((r) => r.token === token);
  if (!record)
    throw new ApprovalCenterError('pause_not_found', `no question has the token ${token}`);
  return {
    token,
    conversationId: record.conversationId,
    goal: null,
    messages: [],
    earlierMessages: 0,
    toolCall: null,
    source: null,
    run: null,
    history: [recentView(gated, record)],
  } satisfies ContextResponse['context'];
}
