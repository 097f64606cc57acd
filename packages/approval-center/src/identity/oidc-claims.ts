import { ApprovalCenterError } from '../errors.js';
import { type AccessRole, accessOf, isAccessRole, isOperatorName, isRoleName } from './roles.js';

/** Who signed in through the identity provider, in the approval center's roles. */
export interface OidcIdentity {
  name: string;
  access: AccessRole;
  /** The access role first, then the audience roles, as an operator's. */
  roles: string[];
}

/** How claims become an {@link OidcIdentity}. */
export interface ClaimsMapping {
  /** The claim (or dotted path, `realm_access.roles`) holding roles or groups. */
  rolesClaim: string;
  /** Claim value -> roles; none: each value that is a role name is that role. */
  roleMap: Readonly<Record<string, readonly string[]>> | undefined;
  /** The claim naming who signed in, falling back to `sub`. */
  nameClaim: string;
  /** How the role map is named in a refusal (the variable or option that sets it). */
  roleMapName: string;
}

/** The value at a dotted `path` of `claims` (`realm_access.roles`). */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * The identity of verified `claims`: the name claim (else `sub`), and the roles the role map
 * gives the roles claim's values; the highest access role wins, `operator` when only audience
 * roles are given.
 * @throws {ApprovalCenterError} `unauthorized` for a name that is no printable name;
 * `forbidden` when no value maps to a role.
 */
export function identityOf(claims: Record<string, unknown>, mapping: ClaimsMapping): OidcIdentity {
  const { nameClaim, rolesClaim, roleMap } = mapping;
  const named = claimAt(claims, nameClaim);
  const name = typeof named === 'string' && named !== '' ? named : String(claims.sub);
  if (!isOperatorName(name)) {
    throw new ApprovalCenterError(
      'unauthorized',
      `the token's ${nameClaim} is not a name of up to 200 printable characters`,
    );
  }
  const given = claimAt(claims, rolesClaim);
  const values = (Array.isArray(given) ? given : [given]).filter(
    (value): value is string => typeof value === 'string',
  );
  const mapped = values.flatMap((value) =>
    roleMap ? (roleMap[value] ?? []) : isRoleName(value) ? [value] : [],
  );
  if (mapped.length === 0) {
    throw new ApprovalCenterError(
      'forbidden',
      `${name} signed in, but no value of their "${rolesClaim}" claim is a role of this server (${mapping.roleMapName})`,
    );
  }
  const access = accessOf(mapped);
  const audience = mapped.filter((role) => !isAccessRole(role));
  return { name, access, roles: [access, ...new Set(audience)] };
}
