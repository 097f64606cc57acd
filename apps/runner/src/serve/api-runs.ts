import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ApprovalCenterError,
  answererOf,
  type Caller,
  requireAdmin,
  type StartRunLine,
  type StartRunResponse,
  startRunBodySchema,
} from '@x/approval-center';
import {
  baseHeaders,
  checkWrite,
  errorBody,
  limitOf,
  type Route,
  readJson,
  sendJson,
} from '@x/approval-center/http';
import { assertSafeId } from '@x/continuation';
import type { RunStatus } from '@x/continuation-postgres';
import type { QuestionPolicy } from '@x/executive';
import { z } from 'zod';
import { type ModelFor, refuseAnswerer, retryRun, startRun } from '../executive/index.js';
import type { Storage } from '../storage/index.js';
import { toHttpError } from './http-error.js';

/** What the run routes need of the API's context. */
export interface RunsContext {
  storage: Storage;
  caller: Caller;
  /** The model a new run uses (`''`: the server's default). */
  modelFor?: ModelFor | undefined;
  /** The policy a new run's questions are asked under; default none. */
  questionPolicy?: QuestionPolicy | undefined;
}

const STATUSES = ['running', 'waiting', 'ready', 'completed', 'cancelled', 'failed'] as const;

function safeId(what: string, id: string): string {
  try {
    assertSafeId(what, id);
  } catch (error) {
    throw new ApprovalCenterError('invalid_request', (error as Error).message, { cause: error });
  }
  return id;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ApprovalCenterError('invalid_request', 'malformed percent-encoding in the path');
  }
}

const NDJSON = 'application/x-ndjson';

function accepts(req: IncomingMessage, type: string): boolean {
  return (req.headers.accept ?? '').split(',').some((part) => part.split(';')[0]?.trim() === type);
}

/** NDJSON lines to `res`, its status sent with the first (until then an error is a status). */
function lineStream(res: ServerResponse) {
  const stream = {
    started: false,
    send(value: unknown) {
      if (!stream.started) res.writeHead(200, { ...baseHeaders, 'content-type': NDJSON });
      stream.started = true;
      if (!res.destroyed) res.write(`${JSON.stringify(value)}\n`);
    },
  };
  return stream;
}

/** The run routes: list, show, start, retry (same routing as the API's other routes). */
export const runRoutes: Route<RunsContext>[] = [
  {
    method: 'GET',
    pattern: /^\/api\/runs$/,
    async handle(ctx, _m, _req, res, url) {
      const conversation = url.searchParams.get('conversation');
      const status = url.searchParams.get('status');
      if (status !== null && !(STATUSES as readonly string[]).includes(status)) {
        throw new ApprovalCenterError(
          'invalid_request',
          `status takes one of ${STATUSES.join(', ')}`,
        );
      }
      const limit = limitOf(url, 100);
      const runs = await ctx.storage.runs().list({
        ...(conversation === null ? {} : { conversationId: safeId('conversation', conversation) }),
        ...(status === null ? {} : { status: status as RunStatus }),
        limit,
      });
      sendJson(res, 200, { runs });
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/runs$/,
    async handle(ctx, _m, req, res) {
      checkWrite(req);
      // Whoever may answer may start a run; a viewer may do neither.
      answererOf(ctx.caller, refuseAnswerer);
      const parsed = startRunBodySchema.safeParse(await readJson(req));
      if (!parsed.success) {
        throw new ApprovalCenterError(
          'invalid_request',
          `invalid body: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`,
        );
      }
      const { goal, conversation, model, replace } = parsed.data;
      if (!ctx.modelFor)
        throw new ApprovalCenterError('not_found', 'this server does not start runs');
      const conversationId = safeId('conversation', conversation);
      const runModel = ctx.modelFor(model ?? '');
      const options = {
        replace,
        ...(ctx.questionPolicy ? { questionPolicy: ctx.questionPolicy } : {}),
      };
      if (!accepts(req, NDJSON)) {
        const result = await startRun(
          ctx.storage,
          runModel,
          goal,
          conversationId,
          {
            event: () => {},
          },
          options,
        );
        sendJson(res, 200, { conversationId, result } satisfies StartRunResponse);
        return;
      }
      // The run's events as they happen, one JSON line each, then its result (or error).
      const stream = lineStream(res);
      try {
        const result = await startRun(
          ctx.storage,
          runModel,
          goal,
          conversationId,
          { event: (event) => stream.send({ event } satisfies StartRunLine) },
          options,
        );
        stream.send({ conversationId, result } satisfies StartRunLine);
      } catch (caught) {
        // Refused before the run started (409 open work…): the status says so, as without streaming.
        if (!stream.started) throw caught;
        const { error } = toHttpError(caught);
        const { code, message } = errorBody(error).error;
        stream.send({ error: { code, message } } satisfies StartRunLine);
      }
      res.end();
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/runs\/([^/]+)$/,
    async handle(ctx, [raw = ''], _req, res) {
      const runId = decoded(raw);
      const run = await ctx.storage.runs().get(safeId('run id', runId));
      if (!run) throw new ApprovalCenterError('not_found', `no run ${runId}`);
      sendJson(res, 200, { run });
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/runs\/([^/]+)\/retry$/,
    async handle(ctx, [raw = ''], req, res) {
      checkWrite(req);
      requireAdmin(ctx.caller, 'retry a run');
      const runId = safeId('run id', decoded(raw));
      const run = await retryRun(ctx.storage, runId);
      sendJson(res, 200, { run });
    },
  },
];
