import { type SQL, sql } from 'drizzle-orm';
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

/** The `aura.pending_audience` keys an identity matches: anyone, its name, its roles. */
export function identityKeys(identity: Identity): string[] {
  return ['*', `name:${identity.name}`, ...(identity.roles ?? []).map((r) => `role:${r}`)];
}

/** A text[] parameter, passed as JSON text (the drivers encode arrays differently). */
export function textArray(values: readonly string[]): SQL {
  return sql`array(select jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;
}

/**
 * The condition that a `paused_states` row (alias `p`) admits the identity: its audience is
 * empty or names it or one of its roles, and it is not a requester barred from answering.
 */
export function admits(identity: Identity): SQL {
  return sql`((cardinality(p.audience_names) = 0 and cardinality(p.audience_roles) = 0)
    or ${identity.name} = any(p.audience_names)
    or p.audience_roles && ${textArray(identity.roles ?? [])})
    and not (p.requester_may_not_answer and p.requester is not distinct from ${identity.name})`;
}
