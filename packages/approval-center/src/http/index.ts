// What the center's routes use to read requests and answer them, for the routes a host app
// serves beside it (`routes` of createApprovalCenter) to answer the same way.
export { MAX_BODY_BYTES, readJson } from './body.js';
export { checkWrite, isLoopback } from './checks.js';
export { answerRoute, limitOf, pathSegment, type Route } from './routes.js';
export {
  answerOf,
  baseHeaders,
  type ErrorAnswer,
  type ErrorClassifier,
  errorBody,
  sendError,
  sendJson,
} from './send.js';
