import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApprovalCenterError } from './errors.js';
import type { AuthenticatedOperator } from './identity/authenticate.js';
import { appCallerOf, type Caller } from './identity/callers.js';
import { sendAppSession } from './identity/sign-in-routes.js';
import { EventHub } from './live/event-hub.js';
import { answerPoliciesRoute, type PoliciesOptions } from './policies-route.js';
import { executiveFlows, type QuestionsOptions } from './questions/options.js';
import { answerQuestionRoute, isQuestionPath, type QuestionContext } from './questions/routes.js';
import { liveSnapshot } from './questions/views.js';

/** What the center answers itself under `/api/`: the app's session, the Policies tab, the question API. */
export interface OwnRoutes {
  /** The center's own API routes for one request: true when one of them answered it. */
  answer(request: OwnRequest): Promise<boolean>;
  /** The questions changed: the live feed looks again now. */
  poke(): void;
  /** Stops the live feed the center made. */
  close(): Promise<void>;
}

/** One request to {@link OwnRoutes.answer}. */
export interface OwnRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Who `authenticate` says sent it. */
  operator: AuthenticatedOperator | undefined;
  /** Who the host's routes found sent it, when they did. */
  caller: Caller | undefined;
  /** The host's routes checked who is calling before, or `authenticate` knows them. */
  admitted: boolean;
}

/** The center's own routes over its `policies` and `questions` options. */
export function ownRoutesOf(options: {
  policies?: PoliciesOptions | undefined;
  questions?: QuestionsOptions | undefined;
  onError?: ((message: string) => void) | undefined;
}): OwnRoutes {
  const { policies, questions, onError = () => {} } = options;
  const made =
    questions && !questions.hub
      ? new EventHub({
          snapshot: () => liveSnapshot(questions),
          pollMs: 1_000,
          onError: (error) => onError(`event feed: ${(error as Error)?.message ?? error}`),
        })
      : undefined;
  const context: Omit<QuestionContext, 'caller'> | undefined = questions && {
    ...questions,
    flows: questions.flows ?? executiveFlows(questionsFlow(questions), questions.gatedTools),
    hub: (questions.hub ?? made) as EventHub,
  };
  return {
    async answer({ req, res, url, operator, caller, admitted }) {
      const who = caller ?? (operator && appCallerOf(req, operator));
      if (context && url.pathname === '/api/session' && req.method === 'GET') {
        sendAppSession(res, who);
        return true;
      }
      if (policies && url.pathname === '/api/policies') {
        if (!admitted) throw notSignedIn();
        return answerPoliciesRoute(policies, req, res, url);
      }
      if (!context) return false;
      if (who) return answerQuestionRoute({ ...context, caller: who }, req, res, url);
      if (isQuestionPath(url.pathname)) throw notSignedIn();
      return false;
    },
    poke: () => context?.hub.poke(),
    close: async () => made?.close(),
  };
}

/** The flows' context of `questions`: its storage, announcing no events. */
function questionsFlow(questions: QuestionsOptions) {
  return { storage: questions.storage, events: { wants: () => false, record: async () => {} } };
}

function notSignedIn(): ApprovalCenterError {
  return new ApprovalCenterError(
    'unauthorized',
    'sign in first: the app does not know who is calling (give the center authenticate, or routes that check)',
  );
}
