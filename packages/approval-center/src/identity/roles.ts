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
