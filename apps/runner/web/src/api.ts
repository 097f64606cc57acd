/** A pending question, as `GET /api/pauses` returns it. */
export interface Pause {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  options: string[] | null;
  priority: number;
  proxiedFromChildId: string;
  createdAt: string;
  ageMs: number;
}

/** A recent question, as `GET /api/recent` returns it. */
export interface Recent {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  priority: number;
  proxiedFromChildId: string;
  createdAt: string;
  answeredAt: string | null;
  answer: { action: Action; content: string } | null;
  status: 'pending' | 'answered' | 'resumed' | 'closed';
  outcome: 'completed' | 'waiting' | 'cancelled' | null;
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
  answer: (token: string, action: Action, content: string) =>
    call(`/api/pauses/${encodeURIComponent(token)}/answer`, { action, content }),
  answerBatch: (tokens: string[], action: Action, content: string) =>
    call<{ answered: number }>('/api/pauses/answer-batch', {
      answers: tokens.map((token) => ({ token, action, content })),
    }),
  stop: (conversationId: string) =>
    call<{ pauses: number }>(`/api/conversations/${encodeURIComponent(conversationId)}/stop`, {}),
};
