/** A pending question, as `GET /api/pauses` returns it. */
export interface Pause {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  options: string[] | null;
  priority: number;
  /** The priority in the server's word (`urgent`, `high`), `null` for the default 0. */
  priorityLabel: 'urgent' | 'high' | null;
  proxiedFromChildId: string;
  source: Source | null;
  createdAt: string;
  ageMs: number;
}

/** The worker of a parent's `delegate` call that asked, and its sub-task. */
export interface Source {
  worker: string;
  task: string | null;
}

/** A run's state, as the API shows it. */
export interface Run {
  runId: string;
  status: 'running' | 'waiting' | 'ready' | 'completed' | 'cancelled' | 'failed';
  attempts: number;
  lastError: string | null;
  startedAt: string;
  finishedAt: string | null;
}

/** What `GET /api/pauses/:token/context` returns: what to know beside one question. */
export interface Context {
  token: string;
  conversationId: string;
  goal: string | null;
  messages: Array<{ role: 'user' | 'assistant'; text: string }>;
  earlierMessages: number;
  toolCall: { id: string; name: string; input: unknown } | null;
  source: Source | null;
  run: Run | null;
  history: Recent[];
}

/** A recent question, as `GET /api/recent` returns it. */
export interface Recent {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  priority: number;
  /** The priority in the server's word (`urgent`, `high`), `null` for the default 0. */
  priorityLabel: 'urgent' | 'high' | null;
  proxiedFromChildId: string;
  source: Source | null;
  createdAt: string;
  answeredAt: string | null;
  answer: { action: Action; content: string } | null;
  /** Who answered (the operator behind the token, or the OS user of the CLI), where recorded. */
  answeredBy?: string | null;
  status: 'pending' | 'answered' | 'resumed' | 'failed' | 'closed';
  outcome: 'completed' | 'waiting' | 'cancelled' | 'failed' | null;
  run: Run | null;
}

export type Action = 'accept' | 'decline' | 'cancel';

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
    init.headers = { accept: 'application/json', 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = (await response.json().catch(() => ({}))) as {
    error?: { code?: string; message?: string };
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

export const api = {
  pending: () => call<{ pauses: Pause[] }>('/api/pauses?limit=500').then((d) => d.pauses),
  recent: () => call<{ recent: Recent[] }>('/api/recent?limit=100').then((d) => d.recent),
  context: (token: string) =>
    call<{ context: Context }>(`/api/pauses/${encodeURIComponent(token)}/context`).then(
      (d) => d.context,
    ),
  answer: (token: string, action: Action, content: string) =>
    call(`/api/pauses/${encodeURIComponent(token)}/answer`, { action, content }),
  answerBatch: (tokens: string[], action: Action, content: string) =>
    call<{ answered: number }>('/api/pauses/answer-batch', {
      answers: tokens.map((token) => ({ token, action, content })),
    }),
  stop: (conversationId: string) =>
    call<{ pauses: number }>(`/api/conversations/${encodeURIComponent(conversationId)}/stop`, {}),
};
