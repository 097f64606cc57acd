import type {
  AnswerAction,
  AnswerBody,
  AnswerResponse,
  BatchBody,
  BatchResponse,
  ContextResponse,
  ErrorResponse,
  NotificationResponse,
  NotificationsResponse,
  PausesResponse,
  PoliciesResponse,
  RecentResponse,
  SessionResponse,
  SignInBody,
  SignOutResponse,
  StopResponse,
} from '@x/approval-center/contract';

/** The page session's CSRF token, which every write sends (set by the session calls). */
let csrfToken: string | null = null;

const remember = (session: SessionResponse) => {
  csrfToken = session.csrfToken;
  return session;
};

/** An API failure, with the server's code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers = {
      accept: 'application/json',
      'content-type': 'application/json',
      ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}),
    };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  // Typed loosely: a proxy's error page is no ErrorResponse, and still gives a message.
  const data = (await response.json().catch(() => ({}))) as {
    error?: Partial<ErrorResponse['error']>;
  };
  if (!response.ok) {
    throw new ApiError(
      response.status,
      data.error?.code ?? 'error',
      data.error?.message ?? `${response.status} ${response.statusText}`,
    );
  }
  return data as T;
}

/** The calls this page makes, each typed with the server's shapes. */
export const api = {
  session: () => call<SessionResponse>('api/session').then(remember),
  signIn: (key: string) =>
    call<SessionResponse>('api/sign-in', { key } satisfies SignInBody).then(remember),
  signOut: () =>
    call<SignOutResponse>('api/sign-out', {}).then((done) => {
      csrfToken = null;
      return done;
    }),
  pending: () => call<PausesResponse>('api/pauses?limit=500').then((d) => d.pauses),
  recent: () => call<RecentResponse>('api/recent?limit=100').then((d) => d.recent),
  context: (token: string) =>
    call<ContextResponse>(`api/pauses/${encodeURIComponent(token)}/context`).then((d) => d.context),
  answer: (token: string, action: AnswerAction, content: string) =>
    call<AnswerResponse>(`api/pauses/${encodeURIComponent(token)}/answer`, {
      action,
      content,
    } satisfies AnswerBody),
  answerBatch: (tokens: string[], action: AnswerAction, content: string) =>
    call<BatchResponse>('api/pauses/answer-batch', {
      answers: tokens.map((token) => ({ token, action, content })),
    } satisfies BatchBody),
  stop: (conversationId: string) =>
    call<StopResponse>(`api/conversations/${encodeURIComponent(conversationId)}/stop`, {}),
  notifications: (query: { status?: string; before?: string; limit: number }) =>
    call<NotificationsResponse>(
      `api/notifications?${new URLSearchParams({
        limit: String(query.limit),
        ...(query.status ? { status: query.status } : {}),
        ...(query.before ? { before: query.before } : {}),
      })}`,
    ),
  policies: () => call<PoliciesResponse>('api/policies'),
  retryNotification: (id: string) =>
    call<NotificationResponse>(`api/notifications/${encodeURIComponent(id)}/retry`, {}).then(
      (d) => d.notification,
    ),
};
