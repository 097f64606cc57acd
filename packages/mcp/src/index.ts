/**
 * @packageDocumentation
 * `@x/mcp`: MCP elicitation as a durable human question. An MCP client's
 * `elicitation/create` becomes an `@x/askuser` pause; its answer (accept, decline, cancel,
 * checked against the requested schema) answers the server, also after a client restart.
 */
export {
  answerElicitation,
  checkAnswer,
  type ElicitationAnswer,
  type ElicitationContent,
  toElicitResult,
} from './answer.js';
export {
  type DurableElicitations,
  type DurableElicitationsOptions,
  durableElicitations,
  type ResumeReport,
} from './durable.js';
export { McpElicitationError, type McpElicitationErrorCode } from './errors.js';
export {
  ELICITATION_KIND,
  type ElicitationQuestion,
  pendingElicitations,
  type RequestedSchema,
  readQuestion,
  SERVER_CANCELLED_MARKER,
  UNDELIVERABLE_MARKER,
} from './question.js';
