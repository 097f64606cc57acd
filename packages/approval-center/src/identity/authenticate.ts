import type { IncomingMessage } from 'node:http';
import { ApprovalCenterError } from '../errors.js';
import { type AccessRole, accessOf, isAccessRole, isOperatorName, isRoleName } from './roles.js';

/** Who an app's own sign-in says sent a request: their name and roles. */
export interface AppOperator {
  /** Recorded as `answeredBy` with each answer they give. */
  name: string;
  /**
   * Their roles: an access role (`admin`, `operator`, `viewer`; `operator` when none is
   * given) and audience roles (`finance`, ...), each a role name.
   */
  roles: readonly string[];
  /**
   * The CSRF token of the app's sign-in, when it is a cookie: the page reads it from
   * `GET /api/session` and sends it in `X-CSRF-Token` with each write, which the center
   * refuses (403) without it. Leave it out for a sign-in no other site can make the browser
   * send (a bearer header a proxy sets, ...).
   */
  csrfToken?: string | undefined;
}

/**
 * An app's own sign-in: who sent `req` (read from the app's session cookie, a header its
 * proxy sets, ...), or nothing when the app does not know them.
 */
export type Authenticate = (
  req: IncomingMessage,
) => AppOperator | null | undefined | Promise<AppOperator | null | undefined>;

/** An operator as the approval center acts on them: the name, the access role, every role. */
export interface AuthenticatedOperator {
  name: string;
  access: AccessRole;
  /** The access role first, then the audience roles, each once. */
  roles: string[];
  /** The CSRF token each write must carry ({@link AppOperator.csrfToken}), if the app gave one. */
  csrfToken?: string;
}

/**
 * Asks the app's `authenticate` who sent `req`, and checks its answer.
 * @returns the operator with their access role, or undefined when the app does not know them.
 * @throws {ApprovalCenterError} `invalid_argument` when `authenticate` returns a name or a role
 * that is none (an app's mistake: nobody is signed in with it); `forbidden` when it returns no
 * role at all. What `authenticate` throws is thrown unchanged.
 * @example
 * const authenticate: Authenticate = (req) => {
 *   const user = appSessions.get(req.headers.cookie);
 *   return user && { name: user.email, roles: user.isAdmin ? ['admin'] : ['operator'] };
 * };
 * const operator = await authenticatedBy(authenticate, req); // { name, access, roles } | undefined
 */
export async function authenticatedBy(
  authenticate: Authenticate,
  req: IncomingMessage,
): Promise<AuthenticatedOperator | undefined> {
  const who = await authenticate(req);
  if (who === undefined || who === null) return undefined;
  const { name, roles, csrfToken } = who as Partial<AppOperator>;
  if (typeof name !== 'string' || !isOperatorName(name)) {
    throw new ApprovalCenterError(
      'invalid_argument',
      'authenticate returned a name that is not 1 to 200 printable characters',
    );
  }
  if (!Array.isArray(roles)) {
    throw new ApprovalCenterError(
      'invalid_argument',
      `authenticate returned no roles list for ${name}`,
    );
  }
  const bad = roles.find((role) => typeof role !== 'string' || !isRoleName(role));
  if (bad !== undefined) {
    throw new ApprovalCenterError(
      'invalid_argument',
      `authenticate returned ${JSON.stringify(bad)} as a role of ${name}: a role is a lower-case letter, then up to 49 of a-z, 0-9, _ and -`,
    );
  }
  if (roles.length === 0) {
    throw new ApprovalCenterError('forbidden', `${name} is signed in, but has no role here`);
  }
  if (csrfToken !== undefined && (typeof csrfToken !== 'string' || csrfToken.length < 16)) {
    throw new ApprovalCenterError(
      'invalid_argument',
      `authenticate returned a csrfToken for ${name} that is not a string of 16 characters or more`,
    );
  }
  const access = accessOf(roles);
  const audience = roles.filter((role) => !isAccessRole(role));
  return {
    name,
    access,
    roles: [access, ...new Set(audience)],
    ...(csrfToken === undefined ? {} : { csrfToken }),
  };
}
