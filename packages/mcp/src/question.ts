import {
  type ElicitRequestFormParams,
  ElicitRequestFormParamsSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { AskUserStore, Pending } from '@x/askuser';
import { z } from 'zod';
import { McpElicitationError } from './errors.js';

/** The `kind` of the `@x/askuser` pauses this package writes. */
export const ELICITATION_KIND = 'elicitation';

/**
 * The `content` an undeliverable pause is closed with (action `cancel`): its question came
 * on a connection that is gone, so no answer can reach the server that asked.
 */
export const UNDELIVERABLE_MARKER =
  '[@x/mcp: undeliverable: the MCP connection that asked is gone, so its request can no longer be answered]';

/**
 * The `content` a pause is closed with (action `cancel`) when the server cancels its request
 * (`notifications/cancelled`, e.g. after its request timeout); the reason follows.
 */
export const SERVER_CANCELLED_MARKER = '[@x/mcp: the MCP server cancelled its request]';

/** The schema of the answer a form elicitation asks for (a flat object of primitives). */
export type RequestedSchema = ElicitRequestFormParams['requestedSchema'];

// Where a pause's request came from: enough to answer it on the same connection later.
const ContextSchema = z.object({
  mcp: z.object({
    version: z.literal(1),
    server: z.string(),
    /** The MCP session id, or an id of its own for a connection without one (stdio). */
    connection: z.string(),
    sessionId: z.string().optional(),
    requestId: z.union([z.string(), z.number()]),
    /** The client fills in the schema's defaults (`elicitation.form.applyDefaults`). */
    applyDefaults: z.literal(true).optional(),
  }),
});

/** What a pause's `resumeContext` holds for an elicitation. */
export type ElicitationContext = z.infer<typeof ContextSchema>['mcp'];

/** An MCP server's question, as its pause holds it. */
export interface ElicitationQuestion {
  /** The pause's token: answer with it. */
  token: string;
  conversationId: string;
  /** What the server asks the person. */
  message: string;
  /** The schema an `accept` answer's content must match. */
  requestedSchema: RequestedSchema;
  /** The name given to the server in `durableElicitations`. */
  server: string;
  /** The MCP session the request came on; absent for a connection without sessions (stdio). */
  sessionId?: string;
  /** The JSON-RPC id of the server's `elicitation/create` request. */
  requestId: string | number;
  /** The connection the request came on (the session id, else an id of its own). */
  connection: string;
  /**
   * The client declared `elicitation.form.applyDefaults`: an `accept` gets the schema's
   * defaults for the fields it leaves out, before it is checked.
   */
  applyDefaults?: true;
  createdAt: Date;
}

/** The pause fields of one elicitation request. */
export function pauseOf(
  token: string,
  conversationId: string,
  params: ElicitRequestFormParams,
  context: ElicitationContext,
) {
  return {
    token,
    conversationId,
    kind: ELICITATION_KIND,
    question: params.message,
    options: params.requestedSchema,
    toolCallId: String(context.requestId),
    resumeContext: { mcp: context },
  };
}

/**
 * Reads an `@x/askuser` pause as an elicitation question.
 *
 * @throws {McpElicitationError} `not_elicitation` for a pause of another kind, or one whose
 *   schema or context does not parse.
 */
export function readQuestion(pause: Pending): ElicitationQuestion {
  const fail = (why: string): never => {
    throw new McpElicitationError(
      'not_elicitation',
      `pause ${JSON.stringify(pause.token)} ${why}: answer it with @x/askuser's markResumed instead`,
      { token: pause.token },
    );
  };
  if (pause.kind !== ELICITATION_KIND) fail(`is a "${pause.kind}" pause, not an MCP elicitation`);
  const schema = ElicitRequestFormParamsSchema.shape.requestedSchema.safeParse(pause.options);
  const context = ContextSchema.safeParse(pause.resumeContext);
  if (!schema.success || !context.success)
    return fail('has no readable requested schema or MCP context');
  const { server, sessionId, requestId, connection, applyDefaults } = context.data.mcp;
  const question: ElicitationQuestion = {
    token: pause.token,
    conversationId: pause.conversationId,
    message: pause.question,
    requestedSchema: schema.data,
    server,
    requestId,
    connection,
    createdAt: pause.createdAt,
  };
  if (sessionId !== undefined) question.sessionId = sessionId;
  if (applyDefaults) question.applyDefaults = applyDefaults;
  return question;
}

/**
 * The elicitations of a conversation that wait for an answer, oldest first: what an
 * operator's inbox shows (other kinds of pauses are left out).
 *
 * @example
 * for (const q of await pendingElicitations(store, 'conv-1')) console.log(q.token, q.message, q.requestedSchema);
 */
export async function pendingElicitations(
  store: AskUserStore,
  conversationId: string,
): Promise<ElicitationQuestion[]> {
  const pending = await store.listPending(conversationId);
  return pending.filter((pause) => pause.kind === ELICITATION_KIND).map(readQuestion);
}
