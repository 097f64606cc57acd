import { type SlackTarget as NotifySlackTarget, slackSender as notifySlackSender } from '@x/notify';
import { slackMessages } from '../storage/notifications.js';
import type { Sender } from './sender.js';

/** The Slack app the questions are posted by (RUNNER_SLACK_*). */
export type SlackTarget = Omit<NotifySlackTarget, 'messages'>;

/**
 * @x/notify's Slack sender, keeping where each question's message went in the runner's
 * `runner.slack_messages`, so the end of a question updates its message.
 */
export function slackSender(target: SlackTarget): Sender {
  return (n, storage) => notifySlackSender({ ...target, messages: slackMessages(storage.db) })(n);
}
