import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChannelAnswers } from './channels/answers.js';
import { answerDecisionRoute } from './channels/decision-route.js';
import { answerSlackRoute, type SlackInteractionsOptions } from './channels/slack-route.js';
import type { ErrorClassifier } from './http/send.js';
import {
  answerOidcRoute,
  type OidcRoutes,
  type OidcRoutesOptions,
  oidcRoutes,
} from './identity/oidc-routes.js';

/**
 * The channels that answer outside the page, each with its own credential: decision links
 * of emails (`GET`/`POST /decide`) and Slack's buttons (`POST /slack/interactions`).
 */
export interface ChannelsOptions {
  /** How their answers are recorded, and who answers. */
  answers: ChannelAnswers;
  /** The key decision links are signed with (the deliverer's); none: no `/decide`. */
  decisionKey?: string | undefined;
  /** Slack's interactivity endpoint; none: no `/slack/interactions`. */
  slack?: SlackInteractionsOptions | undefined;
}

/** What the open routes need of the center's options. */
export interface OpenRoutesOptions {
  oidc?: OidcRoutesOptions | undefined;
  channels?: ChannelsOptions | undefined;
  publicUrl?: string | undefined;
  classifyError?: ErrorClassifier | undefined;
}

/**
 * The routes a request reaches before anyone signs it in, because it carries its own
 * credential: the OpenID Connect sign-in's, decision links and Slack's. True when one answered.
 */
export function openRoutes(options: OpenRoutesOptions) {
  const { channels, publicUrl, classifyError } = options;
  const oidc: OidcRoutes | undefined = options.oidc && oidcRoutes(options.oidc);
  return async (req: IncomingMessage, res: ServerResponse, url: URL, mountPath: string) => {
    const { decisionKey, slack, answers } = channels ?? {};
    // A decision link is its own credential: signed, for one answer by one person, once.
    if (decisionKey !== undefined && answers) {
      const request = { mountPath, classifyError };
      if (await answerDecisionRoute(decisionKey, answers, req, res, url, request)) return true;
    }
    // Slack's requests are signed by Slack; the user is mapped to an operator.
    if (
      slack &&
      answers &&
      (await answerSlackRoute(slack, answers, req, res, url, classifyError))
    ) {
      return true;
    }
    return oidc !== undefined
      ? answerOidcRoute(oidc, req, res, url, { mountPath, publicUrl, classifyError })
      : false;
  };
}
