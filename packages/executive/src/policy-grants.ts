import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { ExecutiveError } from './errors.js';
import type { ExecutiveDatabase as Db } from './storage.js';

/** The most scopes one run may be granted, and the longest one (its tool and arguments as JSON). */
export const MAX_GRANTS = 20;
/** The longest scope, in characters of its tool name and arguments as JSON. */
export const MAX_GRANT_LENGTH = 1000;

/**
 * A pre-approved scope: calls of `tool` whose arguments hold each of `arguments`' values (all of
 * them when none is given) are allowed with no person, where the policies would ask.
 */
export interface Grant {
  tool: string;
  arguments?: Record<string, unknown>;
}

/** How a scope reads (`pay`, `pay {"payee":"acme"}`). */
export function grantText(grant: Grant): string {
  return grant.arguments ? `${grant.tool} ${JSON.stringify(grant.arguments)}` : grant.tool;
}

/** Why `grants` cannot be granted, or undefined: at most {@link MAX_GRANTS}, each short enough. */
export function grantsProblem(grants: readonly Grant[]): string | undefined {
  if (grants.length > MAX_GRANTS) {
    return `at most ${MAX_GRANTS} pre-approved scopes per run; ${grants.length} were given`;
  }
  for (const grant of grants) {
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(grant.tool)) {
      return `pre-approved scope: ${JSON.stringify(grant.tool)} is not a tool name`;
    }
    const given = grant.arguments;
    if (
      given !== undefined &&
      (typeof given !== 'object' || given === null || Array.isArray(given))
    ) {
      return `pre-approved scope ${grant.tool}: its arguments are a JSON object`;
    }
    if (grantText(grant).length > MAX_GRANT_LENGTH) {
      return `pre-approved scope ${grant.tool}: at most ${MAX_GRANT_LENGTH} characters`;
    }
  }
  return undefined;
}

/**
 * Grants a run its pre-approved scopes, in `db`'s transaction when it is one.
 * @throws {ExecutiveError} `usage` for too many or too long scopes: nothing is granted.
 */
export async function grantScopes(db: Db, runId: string, grants: readonly Grant[]): Promise<void> {
  const problem = grantsProblem(grants);
  if (problem) throw new ExecutiveError('usage', problem, { runId });
  if (grants.length === 0) return;
  const rows = grants.map(
    (grant, idx) =>
      sql`(${runId}, ${idx}, ${grant.tool}, ${grant.arguments === undefined ? null : JSON.stringify(grant.arguments)}::jsonb)`,
  );
  await db.execute(sql`insert into x_executive.policy_grants (run_id, idx, tool, arguments)
    values ${sql.join(rows, sql`, `)} on conflict do nothing`);
}

/** The scopes granted to a run, in the order given. */
export async function grantsOf(db: Db, runId: string): Promise<Grant[]> {
  const rows = rowsOf(
    await db.execute(
      sql`select tool, arguments from x_executive.policy_grants where run_id = ${runId} order by idx`,
    ),
  );
  return rows.map((row) => {
    const given = typeof row.arguments === 'string' ? JSON.parse(row.arguments) : row.arguments;
    return {
      tool: String(row.tool),
      ...(given === null || given === undefined
        ? {}
        : { arguments: given as Record<string, unknown> }),
    };
  });
}

/** The first of `grants` that covers a call of `tool` with `input`, if any. */
export function coveringGrant(
  grants: readonly Grant[],
  tool: string,
  input: unknown,
): Grant | undefined {
  const given = (input ?? {}) as Record<string, unknown>;
  return grants.find(
    (grant) =>
      grant.tool === tool &&
      Object.entries(grant.arguments ?? {}).every(
        ([name, value]) => JSON.stringify(given[name]) === JSON.stringify(value),
      ),
  );
}
