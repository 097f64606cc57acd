/**
 * @packageDocumentation
 * `@x/notify`: delivers `@x/askuser`'s notification outbox at least once ({@link Deliverer},
 * retries with backoff, the event id as each delivery's stable id) through the channels'
 * senders ({@link webhookSender} with the Standard Webhooks headers, {@link slackSender},
 * {@link emailSender} over SMTP), signs and reads one-time decision links
 * ({@link signDecisionLink}, {@link readDecisionLink}), verifies Slack's signed requests
 * ({@link slackSigned}), and seals the audit log ({@link AuditSealer}). Its own tables (the used
 * decision links, where each Slack message is) are created by {@link migrate}; which events go
 * to which channel is {@link NotifyRule}s ({@link channelsFor}). Every setting is an option:
 * nothing is read from the environment.
 */
export { AuditSealer, type AuditSealerOptions, SEAL_EVERY_MS } from './audit-sealer.js';
export {
  type DecisionClaims,
  type DecisionLinkFields,
  type DecisionLinkLedger,
  decisionCsrf,
  LINK_TTL_MS,
  MAX_LINK_CONTENT_CHARS,
  memoryDecisionLinkLedger,
  readDecisionLink,
  shownDigest,
  signDecisionLink,
} from './decision-link.js';
export { Deliverer, type DelivererOptions, type DeliveryEvent } from './deliverer.js';
export {
  type DecisionLinks,
  type EmailContent,
  type EmailMessage,
  type EmailTarget,
  type EmailTransport,
  emailOf,
  emailSender,
  emailTransport,
} from './email.js';
export { NotifyError, type NotifyErrorCode, type NotifyErrorOptions } from './errors.js';
export { type EventData, eventDataOf, QUESTION_ENDINGS } from './event-data.js';
export { escapeHtml } from './html.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, migrate } from './migrate.js';
export {
  anyRouteFor,
  CHANNELS,
  type Channel,
  channelsFor,
  type NotifyRule,
  parseNotifyRules,
  type RoutedEvent,
  ruleMatches,
} from './routing.js';
export type { Sender } from './sender.js';
export {
  SLACK_API_URL,
  type SlackButton,
  type SlackMessage,
  type SlackMessageStore,
  type SlackTarget,
  slackEnding,
  slackMessage,
  slackSender,
  slackUserEmail,
} from './slack.js';
export { SLACK_WINDOW_S, slackSigned } from './slack-signature.js';
export {
  postgresDecisionLinkLedger,
  postgresSlackMessageStore,
  useDecisionLink,
} from './tables.js';
export { sendWebhook, type WebhookTarget, webhookSender, webhookSignature } from './webhook.js';
