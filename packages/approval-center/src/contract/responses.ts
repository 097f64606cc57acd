// The page compiles this file: only the dependency-free part of @x/askuser.
import type { ShownOption } from '@x/askuser/options';
import type { AnswerAction, AnswerBody } from './bodies.js';

// The approval center's responses and events, as the server sends them and the page reads them.

/** A priority in the operator's word: the page's badge and the CLI's lists say the same. */
export type PriorityLabel = 'urgent' | 'high';

/**
 * Where a worker's question comes from: the worker (`w1`..) a parent's `delegate` call ran,
 * and the sub-task it was given (`null` when the pause does not say).
 */
export interface SourceView {
  worker: string;
  task: string | null;
}

/** A pending question as the API shows it. */
export interface PauseView {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  /**
   * The choices offered, as the asking app gave them (a string, or a `{ label, description }`
   * object whose label is the answer's content), or `null` for a free answer.
   */
  options: ShownOption[] | null;
  priority: number;
  /** The priority in a word (`urgent`, `high`), `null` for the default 0. */
  priorityLabel: PriorityLabel | null;
  /** The child thread the question was relayed from, or `''` for the conversation itself. */
  proxiedFromChildId: string;
  /** The worker that asked, for a question relayed from a sub-agent; `null` otherwise. */
  source: SourceView | null;
  createdAt: string;
  /** Milliseconds since the question was asked (server clock). */
  ageMs: number;
  /** When the question stops waiting and what is applied then (RUNNER_DEADLINE), or `null`. */
  deadline: DeadlineView | null;
  /** When its audience is (or was) reminded, or `null`. */
  reminder: { at: string; remindedAt: string | null } | null;
  /** When its audience is (or was) widened, and by whom, or `null`. */
  escalation: { at: string; names: string[]; roles: string[]; escalatedAt: string | null } | null;
  /** The approvals it needs (M of its audience) and those given so far, or `null`. */
  quorum: QuorumView | null;
  /**
   * Whether the caller may answer it (not a viewer, inside its audience, not its barred
   * requester): the page shows an answer form only then. The store checks again when an
   * answer comes.
   */
  canAnswer: boolean;
  /** Why the caller may not answer it (`null` when `canAnswer`), for the page to say. */
  readOnly: ReadOnlyReason | null;
  /** A gated tool's call waiting for approval (kind `approve`), or `null`. */
  gated: GatedView | null;
  /**
   * The asking kind cannot run the call with other arguments (`@x/openai-agents`, `@x/ai-sdk`):
   * approve or decline only, the page offers no "Approve with changes"; absent or `false` otherwise.
   */
  fixedArguments?: boolean;
  /** Why a policy asked it (its rules, their reason, the set's hash), when one decided; else absent or `null`. */
  policy?: PolicyReasonView | null;
}

/** Why a policy asked a question: `reason` reads e.g. `rule "pay-over-1000": payments over 1,000 need two of finance`. */
export interface PolicyReasonView {
  reason: string;
  ruleIds: string[];
  policyHash: string;
  /** Why deciding failed (then the admins were asked), or `null`. */
  error: string | null;
}

/**
 * Why a question is read-only for the caller: `viewer` (viewers read, never answer),
 * `audience` (its audience names neither them nor a role of theirs), `requester` (they asked
 * for it, and its requester may not answer it: separation of duties).
 */
export type ReadOnlyReason = 'viewer' | 'audience' | 'requester';

/**
 * A gated tool's call as the approver sees it: accept with `content` `''` runs these
 * arguments; accept with the edited arguments as a JSON object (checked against `schema`)
 * runs those instead.
 */
export interface GatedView {
  tool: string;
  /** The arguments the model gave. */
  arguments: Record<string, unknown>;
  /** The JSON schema of the tool's arguments (from its zod schema). */
  schema: Record<string, unknown>;
}

/**
 * Where a question stands: `pending` (no answer yet), `answered` (its run is ready or being
 * resumed, or no executive run owns it: an app's own question, which the app resumes itself),
 * `resumed` (its run went on past it: see `outcome`), `failed` (its run failed after its
 * retries: `runner retry` makes it ready again), `closed` (answered, but its run will not
 * resume from it: the conversation was stopped, or the run is gone),
 * `expired` (nobody answered before its deadline: its default was applied, see `outcome`).
 */
export type PauseStatus = 'pending' | 'answered' | 'resumed' | 'failed' | 'closed' | 'expired';

/** A question's deadline: when it stops waiting, the default applied then, and the time left. */
export interface DeadlineView {
  at: string;
  answer: AnswerBody;
  /** Milliseconds until the deadline (server clock), 0 once it passed. */
  msLeft: number;
}

/** A question's quorum: M approvals needed (and declines), and who gave theirs so far. */
export interface QuorumView {
  needed: number;
  declinesNeeded: number;
  approvals: ApprovalView[];
  declines: ApprovalView[];
}

/** One person's recorded answer towards a quorum. */
export interface ApprovalView {
  operator: string;
  at: string;
}

/** What became of the run after this question's answer, as the run records it. */
export type RunOutcome = 'completed' | 'waiting' | 'cancelled' | 'failed';

/** The run behind a question, as the recent list shows it. */
export interface RunView {
  runId: string;
  status: 'running' | 'waiting' | 'ready' | 'completed' | 'cancelled' | 'failed';
  attempts: number;
  lastError: string | null;
  startedAt: string;
  finishedAt: string | null;
}

/** A question of the recent list, pending or answered, with its run's state. */
export interface RecentView {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  priority: number;
  /** The priority in a word (`urgent`, `high`), `null` for the default 0. */
  priorityLabel: PriorityLabel | null;
  proxiedFromChildId: string;
  source: SourceView | null;
  createdAt: string;
  answeredAt: string | null;
  answer: AnswerBody | null;
  /** Who answered (an operator's name, an OS user), or `null`: pending, or not recorded. */
  answeredBy: string | null;
  /** The question's deadline, or `null` when it has none. */
  deadline: DeadlineView | null;
  /** When its deadline was applied (status `expired`; `answer` is the default), or `null`. */
  expiredAt: string | null;
  status: PauseStatus;
  /** For `resumed` and `failed`: how the run went on (a new question → `waiting`). */
  outcome: RunOutcome | null;
  run: RunView | null;
  /**
   * For a question that needs a quorum: every approval and decline recorded (`answeredBy`
   * names only the last), or `null`.
   */
  quorum: QuorumView | null;
  /** A gated tool's call that waited (or waits) for approval, or `null`. */
  gated: GatedView | null;
}

/** One message of the conversation, as text. */
export interface MessageView {
  role: 'user' | 'assistant';
  text: string;
}

/** The tool call that asked the question: for an approval, the proposed action and its arguments. */
export interface ToolCallView {
  id: string;
  name: string;
  input: unknown;
}

/** What an operator needs beside one question (pending or answered) to answer it well. */
export interface ContextView {
  token: string;
  conversationId: string;
  /** The goal the conversation's run was started with (its first user message), if known. */
  goal: string | null;
  /** The conversation's latest messages, oldest first. */
  messages: MessageView[];
  /** How many messages came before `messages`. */
  earlierMessages: number;
  toolCall: ToolCallView | null;
  /** The worker that asked, for a question relayed from a sub-agent. */
  source: SourceView | null;
  /** The run the question belongs to: its state and, once it ended, its outcome. */
  run: RunView | null;
  /** The questions of that run (or of the conversation, without a run), oldest first. */
  history: RecentView[];
}

/** What `GET /api/events` streams (the SSE `event:` is the `type`). */
export type ServeEvent =
  | { type: 'pause-created'; token: string; conversationId: string; kind: string; question: string }
  | { type: 'pause-answered'; token: string; conversationId: string; action: AnswerAction | null }
  | {
      type: 'run-resumed';
      token: string;
      conversationId: string;
      action: AnswerAction | null;
      outcome: RunOutcome | null;
    }
  | { type: 'run-completed'; token: string; conversationId: string }
  /** An approval towards a question's quorum was recorded; the question still waits. */
  | {
      type: 'approval-recorded';
      token: string;
      conversationId: string;
      approvals: number;
      needed: number;
    }
  /** A waiting question's reminder came (RUNNER_REMIND). */
  | { type: 'question-reminded'; token: string; conversationId: string }
  /** A waiting question's audience was widened (RUNNER_ESCALATE). */
  | {
      type: 'question-escalated';
      token: string;
      conversationId: string;
      names: string[];
      roles: string[];
    };

/** `GET /api/pauses`. */
export interface PausesResponse {
  pauses: PauseView[];
}

/** `GET /api/pauses/:token`. */
export interface PauseResponse {
  pause: PauseView;
}

/** `GET /api/pauses/:token/context`. */
export interface ContextResponse {
  context: ContextView;
}

/** `GET /api/recent`. */
export interface RecentResponse {
  recent: RecentView[];
}

/** `POST /api/pauses/:token/answer`. */
export interface AnswerResponse {
  token: string;
  answer: AnswerBody;
  /**
   * For a question that needs a quorum and is not resolved yet: the answer was recorded
   * (`counted` false: that person had answered already), who approved so far, and how many
   * more are needed; `message` says it in words. The run waits.
   */
  recorded?: {
    message: string;
    counted: boolean;
    approvals: string[];
    declines: string[];
    needed: number;
    remaining: number;
  };
}

/** `POST /api/pauses/answer-batch`: how many were answered, and which. */
export interface BatchResponse {
  answered: number;
  tokens: string[];
}

/** `POST /api/conversations/:id/stop`: what the stop closed. */
export interface StopResponse {
  conversationId: string;
  pauses: number;
  continuations: number;
  runs: number;
}

/**
 * `GET /api/session` (and `POST /api/sign-in`): who is signed in, and how the page may sign in.
 * A page session's writes send `csrfToken` as `X-CSRF-Token`.
 */
export interface SessionResponse {
  signedIn: boolean;
  name: string | null;
  access: 'admin' | 'operator' | 'viewer' | null;
  signedInWith: 'key' | 'token' | 'oidc' | 'local' | 'os-user' | 'app' | null;
  /** The session's CSRF token; `null` without a page session (a Bearer key, no sign-in). */
  csrfToken: string | null;
  /** When the page session ends, unless signed out before. */
  expiresAt: string | null;
  /** How one signs in on the page: `key` (an operator's key or the token), `oidc` (`/auth/oidc/login`); none when not needed. */
  methods: Array<'key' | 'oidc'>;
}

/** `POST /api/sign-out`. */
export interface SignOutResponse {
  signedOut: true;
}

/** One audit log entry, as `runner audit --json` prints it. */
export interface AuditEntryView {
  id: string;
  chain: string;
  seq: number;
  kind: string;
  at: string;
  token: string | null;
  data: unknown;
  prev: string;
  hash: string;
  sig: string;
}

/** `GET /api/audit`: a page of the audit log; pass `next` as `?after=` for the next page. */
export interface AuditResponse {
  entries: AuditEntryView[];
  next: string | null;
}

/** One notification of the outbox, as `runner notifications list --json` prints it. */
export interface NotificationView {
  id: string;
  /** The event's id: `webhook-id`, the receiver's idempotency key. */
  eventId: string;
  kind: string;
  channel: string;
  /** pending (to be sent, again), delivered, or failed (given up: the dead letter). */
  status: string;
  attempts: number;
  /** Why the last delivery failed. */
  lastError: string | null;
  createdAt: string;
  /** When a pending one is due. */
  nextAt: string | null;
  deliveredAt: string | null;
  /** The question the event is about, if any. */
  token: unknown;
}

/** `GET /api/notifications` (admins): what was sent, what failed and why, newest first. */
export interface NotificationsResponse {
  notifications: NotificationView[];
  /** The `before` of the next (older) page, or null when this page is the last. */
  next: string | null;
}

/** `POST /api/notifications/:id/retry` (admins): the notification, due again. */
export interface NotificationResponse {
  notification: NotificationView;
}

/** The body of every API failure: a stable code, a message, and details some codes add. */
export interface ErrorResponse {
  error: { code: string; message: string; [detail: string]: unknown };
}

/** A run's state (`runner runs`): waiting on a question, ready to resume, running, or done. */
export type RunStatusView = 'running' | 'waiting' | 'ready' | 'completed' | 'cancelled' | 'failed';

/** One run as `GET /api/runs` and `GET /api/runs/:id` show it (`runner runs --json`); times ISO. */
export interface RunRecordView {
  runId: string;
  conversationId: string;
  status: RunStatusView;
  /** The continuation the run waits on, resumes, or last resumed. */
  interactionId: string | null;
  /** What the resume needs beside the continuation (the person's answer), once ready. */
  input: unknown;
  attempts: number;
  /** Attempts that ended with their worker gone (taken over), not with an error. */
  lostAttempts: number;
  lastError: string | null;
  leaseOwner: string | null;
  leaseExpiresAt: string | null;
  readyAt: string | null;
  deadlineAt: string | null;
  /** The runner's own data (the model id). */
  meta: unknown;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** `GET /api/runs?conversation=&status=&limit=`: newest first. */
export interface RunsResponse {
  runs: RunRecordView[];
}

/** `GET /api/runs/:id`, and `POST /api/runs/:id/retry` (the run, ready again). */
export interface RunResponse {
  run: RunRecordView;
}

/** How a started run stopped: it completed, waits on a question, or was cancelled. */
export type StartRunResult = (
  | { status: 'completed'; runId: string; conversationId: string; messages: unknown[] }
  | {
      status: 'waiting';
      runId: string;
      conversationId: string;
      /** The question's token (the first worker's, for a delegated run). */
      token: string;
      question: string;
      options: string[] | null;
      questions?: unknown[];
      deadline?: unknown;
      /** When a worker next takes the run without an answer (deadline, reminder, escalation). */
      dueAt?: unknown;
      /** A gated tool's call waits for approval: the tool. */
      gated?: string;
    }
  | { status: 'cancelled'; runId: string; conversationId: string }
) & {
  /** What `replace` stopped first. */
  stopped: { pauses: number; continuations: number; runs: number };
};

/** `POST /api/runs` (and the last line of its stream). */
export interface StartRunResponse {
  conversationId: string;
  result: StartRunResult;
}

/**
 * A line of `POST /api/runs` with `Accept: application/x-ndjson`: each of the run's events
 * as it happens (text deltas, tool calls, the question raised), then its result, or an
 * error once the stream started (before, the status says it, as without streaming).
 */
export type StartRunLine =
  | { event: { type: string; [field: string]: unknown } }
  | StartRunResponse
  | ErrorResponse;
