export { looksLikeJwt, Oidc, type OidcOptions, SIGN_IN_TTL_MS } from './oidc.js';
export type { OidcIdentity } from './oidc-claims.js';
export { ACCESS_ROLES, type AccessRole, accessOf, isAccessRole } from './roles.js';
