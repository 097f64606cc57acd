import {
  type SlackTarget as NotifySlackTarget,
  slackSender as notifySlackSender,
  postgresSlackMessageStore,
} from '@x/notify';
import type { Sender } from './sender.js';

/** The Slack app the questions are posted by (RUNNER_SLACK_*). */
export type SlackTarget = Omit<NotifySlackTarget, 'messages'>;

/**
 * @x/notify's Slack sender, keeping where each question's message went in @x/notify's
 * `x_notify.slack_messages` of the runner's database, so the end of a question updates its message.
 */
export function slackSender(target: SlackTarget): Sender {
  return (n, storage) =>
    notifySlackSender({ ...target, messages: postgresSlackMessageStore(storage.db) })(n);
}
