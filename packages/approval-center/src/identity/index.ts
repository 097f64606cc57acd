export {
  type AppOperator,
  type Authenticate,
  type AuthenticatedOperator,
  authenticatedBy,
} from './authenticate.js';
export {
  answererOf,
  type Caller,
  callerOf,
  type KeyOperator,
  type OperatorKeys,
  readOnlyReason,
  requireAdmin,
  type SignInContext,
  type SignInRequest,
} from './callers.js';
export { looksLikeJwt, Oidc, type OidcOptions, SIGN_IN_TTL_MS } from './oidc.js';
export type { OidcIdentity } from './oidc-claims.js';
export type { OidcRoutesOptions } from './oidc-routes.js';
export {
  countFailedSignIn,
  type FailedSignIn,
  FailureLimiter,
  type Limit,
  recordFailedSignIn,
  refuseWhileLimited,
  rememberSource,
  type SignInAudit,
  type SignInLimiters,
  sourceOf,
} from './rate-limit.js';
export {
  ACCESS_ROLES,
  type AccessRole,
  accessOf,
  isAccessRole,
  isOperatorName,
  isRoleName,
} from './roles.js';
export { handleSignIn } from './sign-in-routes.js';
export {
  CSRF_HEADER,
  checkCsrf,
  cookieOf,
  memorySignInStore,
  type PageSignIn,
  type PageSignInIdentity,
  type PageSignInOptions,
  PageSignIns,
  type SignInStore,
  type StoredSignIn,
  sameSecret,
} from './sign-ins.js';
