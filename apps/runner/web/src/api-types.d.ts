// The approval center's HTTP API, declared once for the server (src/serve/) and the page.
// A declaration file importing nothing, so that it sits in both builds and emits no code;
// web/tsconfig.json checks it (skipLibCheck is off there), the server's views are checked
// against it.

/** How an operator answers (MCP elicitation): `accept`, `decline` or `cancel`. */
export type AnswerAction = 'accept' | 'decline' | 'cancel';

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
  /** The choices offered, or `null` for a free answer. */
  options: string[] | null;
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
  /**
   * Whether the caller may answer it (not a viewer, inside its audience): the page shows an
   * answer form only then. The store checks again when an answer comes.
   */
  canAnswer: boolean;
}

/**
 * Where a question stands: `pending` (no answer yet), `answered` (its run is ready or being
 * resumed), `resumed` (its run went on past it: see `outcome`), `failed` (its run failed
 * after its retries: `runner retry` makes it ready again), `closed` (answered, but no run
 * will resume from it: the conversation was stopped, or no run was recorded for it),
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
  | { type: 'run-completed'; token: string; conversationId: string };

/** Body of `POST /api/pauses/:token/answer`, and an answer as the API shows it. */
export interface AnswerBody {
  action: AnswerAction;
  content: string;
}

/** Body of `POST /api/pauses/answer-batch`: all answered, or none. */
export interface BatchBody {
  answers: Array<{ token: string } & AnswerBody>;
}

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

/** Body of `POST /api/sign-in`: an operator's key (or the server's --token), and whose. */
export interface SignInBody {
  key: string;
  /** When given, the key must be this operator's. */
  name?: string;
}

/**
 * `GET /api/session` (and `POST /api/sign-in`): who is signed in, and how the page may sign in.
 * A page session's writes send `csrfToken` as `X-CSRF-Token`.
 */
export interface SessionResponse {
  signedIn: boolean;
  name: string | null;
  access: 'admin' | 'operator' | 'viewer' | null;
  signedInWith: 'key' | 'token' | 'oidc' | 'local' | 'os-user' | null;
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
}

/** `POST /api/notifications/:id/retry` (admins): the notification, due again. */
export interface NotificationResponse {
  notification: NotificationView;
}

/** The body of every API failure: a stable code, a message, and details some codes add. */
export interface ErrorResponse {
  error: { code: string; message: string; [detail: string]: unknown };
}
