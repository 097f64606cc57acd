import { createHash } from 'node:crypto';
import { appendAuditEvent } from '@x/askuser';
import type { Decision } from '@x/policy';
import { jsonParameter, prepareOnce, rowsOf, runPrepared } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import type { ExecutiveDatabase as Db, ExecutiveStorage } from './storage.js';

/** The audit chain every policy decision is appended to (allows and denies too). */
export const POLICY_AUDIT_CHAIN = 'policy';

/** One decision as `x_executive.policy_decisions` keeps it (which `migrate` creates). */
export interface DecisionRecord {
  id: string;
  runId: string;
  conversationId: string;
  tool: string;
  toolCallId: string;
  /** `sha256:` and the hex SHA-256 of the call's arguments as JSON. */
  argumentsDigest: string;
  outcome: Decision['outcome'];
  reason: string;
  ruleIds: string[];
  policyHash: string;
  /** Why deciding failed (then the admins were asked); null when it did not. */
  error: string | null;
  /** The question it asked (`ask`), if any. */
  token: string | null;
  decidedAt: Date;
}

/** What a question shows of the decision that asked it (the pause's resume context keeps it). */
export interface DecisionView {
  outcome: Decision['outcome'];
  reason: string;
  ruleIds: string[];
  policyHash: string;
  error: string | null;
}

/** The part of a decision a question and a record show. */
export function decisionView(decision: Decision): DecisionView {
  const { outcome, reason, ruleIds, policyHash } = decision;
  return {
    outcome,
    reason,
    ruleIds,
    policyHash,
    error: decision.outcome === 'ask' ? decision.error : null,
  };
}

/** `sha256:` and the hex SHA-256 of a tool call's arguments as JSON. */
export function argumentsDigest(input: unknown): string {
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(input ?? null))
    .digest('hex')}`;
}

const insertDecision = prepareOnce(
  () => sql`insert into x_executive.policy_decisions
    (id, run_id, conversation_id, tool, tool_call_id, arguments_digest, outcome, reason, rule_ids, policy_hash, error, token)
    values (${sql.placeholder('id')}, ${sql.placeholder('runId')}, ${sql.placeholder('conversationId')},
      ${sql.placeholder('tool')}, ${sql.placeholder('toolCallId')}, ${sql.placeholder('argumentsDigest')},
      ${sql.placeholder('outcome')}, ${sql.placeholder('reason')}, ${sql.placeholder('ruleIds')}::jsonb,
      ${sql.placeholder('policyHash')}, ${sql.placeholder('error')}, ${sql.placeholder('token')})`,
);

/**
 * Records a decision in `tx` (the transaction that asks its question or records its call),
 * and appends it to the signed audit chain `policy` when the storage has an audit key.
 */
export async function recordDecision(
  tx: Db,
  storage: Pick<ExecutiveStorage, 'auditKey'>,
  record: Omit<DecisionRecord, 'decidedAt'>,
): Promise<void> {
  // Sent now as a prepared statement: no describe round trip, and a one-flight COMMIT follows it.
  const inserted = runPrepared(tx, insertDecision, {
    ...record,
    ruleIds: jsonParameter(record.ruleIds),
  }).then(() => undefined);
  const key = storage.auditKey();
  const audited =
    key === undefined
      ? undefined
      : appendAuditEvent(
          tx,
          { event: 'policy-decision', ...record },
          // The question's own entries keep its token; the decision names it in its data.
          { key, chain: POLICY_AUDIT_CHAIN },
        );
  await Promise.all([inserted, audited]);
}

/** The decisions made in a run, oldest first. */
export async function decisionsOf(db: Db, runId: string): Promise<DecisionRecord[]> {
  const rows = rowsOf(
    await db.execute(sql`select id, run_id, conversation_id, tool, tool_call_id, arguments_digest,
      outcome, reason, rule_ids, policy_hash, error, token, decided_at
      from x_executive.policy_decisions where run_id = ${runId} order by decided_at, id`),
  );
  return rows.map((row) => ({
    id: String(row.id),
    runId: String(row.run_id),
    conversationId: String(row.conversation_id),
    tool: String(row.tool),
    toolCallId: String(row.tool_call_id),
    argumentsDigest: String(row.arguments_digest),
    outcome: String(row.outcome) as Decision['outcome'],
    reason: String(row.reason),
    ruleIds: (typeof row.rule_ids === 'string'
      ? JSON.parse(row.rule_ids)
      : row.rule_ids) as string[],
    policyHash: String(row.policy_hash),
    error: row.error === null || row.error === undefined ? null : String(row.error),
    token: row.token === null || row.token === undefined ? null : String(row.token),
    decidedAt: new Date(String(row.decided_at)),
  }));
}

/** What an asking decision is checked against, read in one statement (see {@link priorOf}). */
export interface Prior {
  /** The scopes granted to the run, in the order given. */
  grants: { tool: string; arguments?: Record<string, unknown> }[];
  /** The questions asked in the conversation for the same call, newest first (at most 5). */
  askedTokens: string[];
  /** How many questions the policies asked in the run. */
  questionsAsked: number;
}

const readPrior = prepareOnce(
  () => sql`select 'grant' as kind, tool, arguments, idx as n, null as token
        from x_executive.policy_grants where run_id = ${sql.placeholder('runId')}
      union all (select 'asked', null, null, null, token from x_executive.policy_decisions
        where conversation_id = ${sql.placeholder('conversationId')} and tool = ${sql.placeholder('tool')}
          and arguments_digest = ${sql.placeholder('argumentsDigest')} and outcome = 'ask' and token is not null
        order by decided_at desc limit 5)
      union all select 'count', null, null, count(*)::int, null from x_executive.policy_decisions
        where run_id = ${sql.placeholder('runId')} and outcome = 'ask'`,
);

/** The run's grants, the same call's earlier questions and the run's question count, in one round trip. */
export async function priorOf(
  db: Db,
  call: { runId: string; conversationId: string; tool: string; argumentsDigest: string },
): Promise<Prior> {
  const rows = await runPrepared(db, readPrior, call);
  const prior: Prior = { grants: [], askedTokens: [], questionsAsked: 0 };
  const grants: [number, Prior['grants'][number]][] = [];
  for (const row of rows) {
    if (row.kind === 'grant') {
      const given = typeof row.arguments === 'string' ? JSON.parse(row.arguments) : row.arguments;
      grants.push([
        Number(row.n),
        {
          tool: String(row.tool),
          ...(given === null || given === undefined ? {} : { arguments: given }),
        },
      ]);
    } else if (row.kind === 'asked') prior.askedTokens.push(String(row.token));
    else prior.questionsAsked = Number(row.n ?? 0);
  }
  prior.grants = grants.sort(([a], [b]) => a - b).map(([, grant]) => grant);
  return prior;
}
