import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { z } from 'zod';

const name = z.string().min(1).max(200);

/** Schema of {@link Audience}. */
export const audienceSchema = z
  .object({
    names: z.array(name).max(100).readonly().optional(),
    roles: z.array(name).max(100).readonly().optional(),
  })
  .strict();

/**
 * Who may answer a question: operators by `names` and/or by `roles`. Both empty (or
 * omitted) means any operator.
 */
export interface Audience {
  names?: readonly string[];
  roles?: readonly string[];
}

/** Schema of {@link Identity}. */
export const identitySchema = z
  .object({ name, roles: z.array(name).max(100).readonly().optional() })
  .strict();

/**
 * The person who answers or lists questions, as the caller authenticated it: a name and
 * roles. This package checks it against a question's audience; it never authenticates.
 */
export interface Identity {
  name: string;
  roles?: readonly string[];
}

/** The `aura.pending_audience` keys an identity matches: its name, its roles. */
export function identityKeys(identity: Identity): string[] {
  return [`name:${identity.name}`, ...(identity.roles ?? []).map((r) => `role:${r}`)];
}

/** A text[] parameter, passed as JSON text (the drivers encode arrays differently). */
export function textArray(values: readonly string[]): SQL {
  return sql`array(select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;
}

/** The columns of a `paused_states` row that {@link admits} reads. */
export interface AudienceColumns {
  names: SQL | SQLWrapper;
  roles: SQL | SQLWrapper;
  requester: SQL | SQLWrapper;
  barred: SQL | SQLWrapper;
}

/** Those columns of `paused_states` under the alias `p`. */
export const aliasedColumns: AudienceColumns = {
  names: sql.raw('p.audience_names'),
  roles: sql.raw('p.audience_roles'),
  requester: sql.raw('p.requester'),
  barred: sql.raw('p.requester_may_not_answer'),
};

/**
 * The condition that a `paused_states` row admits the identity named `name` (text) with
 * `roles` (text[]): its audience is empty or names it or one of its roles, and it is not a
 * requester barred from answering.
 */
export function admits(name: SQL, roles: SQL, c: AudienceColumns = aliasedColumns): SQL {
  return sql`((cardinality(${c.names}) = 0 and cardinality(${c.roles}) = 0)
    or ${name}::text = any(${c.names})
    or ${c.roles} && ${roles})
    and not (${c.barred} and ${c.requester} is not distinct from ${name}::text)`;
}
