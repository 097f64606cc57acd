import type { ChannelsOptions } from '@x/approval-center';
import { setting, VARIABLES } from '../config/index.js';
import { answer, refuseAnswerer } from '../executive/index.js';
import type { Storage } from '../storage/index.js';

/**
 * The approval center's channels as the settings say: decision links with
 * RUNNER_DECISION_KEY, Slack's buttons with RUNNER_SLACK_SIGNING_SECRET (users mapped by
 * RUNNER_SLACK_USERS, else by the email RUNNER_SLACK_TOKEN reads); answers go through the
 * runner's `answer`, refusals of an answerer are counted as the API's are.
 */
export function channelsOf(storage: Storage, answered: () => void): ChannelsOptions {
  const signingSecret = setting(VARIABLES.RUNNER_SLACK_SIGNING_SECRET);
  return {
    answers: {
      pending: (token) => storage.pauses().getByToken(token),
      operators: () => storage.operators().list(),
      answer: (token, given, by, also) => answer(storage, token, given, by, also),
      answered,
      refuse: refuseAnswerer,
    },
    decisionKey: setting(VARIABLES.RUNNER_DECISION_KEY),
    slack:
      signingSecret === undefined
        ? undefined
        : {
            signingSecret,
            users: setting(VARIABLES.RUNNER_SLACK_USERS),
            token: setting(VARIABLES.RUNNER_SLACK_TOKEN),
            apiUrl: setting(VARIABLES.RUNNER_SLACK_API_URL),
            usersName: 'RUNNER_SLACK_USERS',
          },
  };
}
