// The approval center as one mountable request handler, its question API, its API contract,
// and identity (OpenID Connect, roles).
export {
  type ApprovalCenter,
  type ApprovalCenterOptions,
  type CenterRequest,
  type CenterRoutes,
  createApprovalCenter,
} from './center.js';
export {
  type ChannelAnswers,
  type ChannelOperator,
  linkAnswerer,
} from './channels/answers.js';
export type { SlackInteractionsOptions } from './channels/slack-route.js';
export * from './contract/index.js';
export * from './errors.js';
export * from './identity/index.js';
export {
  type Credential,
  EventHub,
  type EventHubOptions,
  type LiveSnapshot,
} from './live/event-hub.js';
export type { ChannelsOptions } from './open-routes.js';
export type { PoliciesOptions, ShownPolicySet } from './policies-route.js';
export {
  executiveFlows,
  type QuestionFlows,
  type QuestionsOptions,
} from './questions/options.js';
export { liveSnapshot, priorityLabel, type ViewSource } from './questions/views.js';
