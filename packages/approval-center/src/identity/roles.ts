/** The roles that say what an operator may do; any other role only places them in audiences. */
export const ACCESS_ROLES = ['admin', 'operator', 'viewer'] as const;

/** What an operator may do: everything, answer what each question allows, or read. */
export type AccessRole = (typeof ACCESS_ROLES)[number];

/** The access role of `roles`: the highest named, `operator` when none is. */
export function accessOf(roles: readonly string[]): AccessRole {
  return ACCESS_ROLES.find((role) => roles.includes(role)) ?? 'operator';
}

/** True when `role` is one of {@link ACCESS_ROLES}. */
export function isAccessRole(role: string): role is AccessRole {
  return (ACCESS_ROLES as readonly string[]).includes(role);
}

/** True for a role name: a lower-case letter, then up to 49 of `a-z`, `0-9`, `_` and `-`. */
export function isRoleName(role: string): boolean {
  return /^[a-z][a-z0-9_-]{0,49}$/.test(role);
}

/** True for a name an answer can be recorded with: 1 to 200 characters, no control character. */
export function isOperatorName(name: string): boolean {
  return /^[^\p{Cc}]{1,200}$/u.test(name);
}
