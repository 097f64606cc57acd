import { createHash } from 'node:crypto';
import { appendAuditEvent } from '@x/askuser';
import type { Decision, RecordedDecision } from '@x/policy';
import { jsonParameter, prepareOnce, rowsOf, runPrepared } from '@x/postgres-kit';
import { type SQL, sql } from 'drizzle-orm';
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
  /**
   * Where the call stands in its run's transcript (the number of messages before the assistant
   * message that made it): a turn run again after a crash finds the same call's decision by it;
   * null on rows recorded before it was kept, or by a gate given no position.
   */
  position: number | null;
  /** `sha256:` and the hex SHA-256 of the call's arguments as JSON. */
  argumentsDigest: string;
  /** The call's arguments as the tool's schema typed them; null on rows recorded before 0.x (not replayable). */
  arguments: unknown;
  /** Who the run acts for (`exec --requester`), if anyone. */
  requester: string | null;
  outcome: Decision['outcome'];
  reason: string;
  ruleIds: string[];
  policyHash: string;
  /** Why deciding failed (then the admins were asked); null when it did not. */
  error: string | null;
  /** The question it asked (`ask`), if any. */
  token: string | null;
  /** What the candidate (shadow) policy set decided of the same call, with no effect; null: none ran. */
  shadow: ShadowOutcome | null;
  decidedAt: Date;
}

/**
 * What a candidate policy set running beside the active one decided of a call: recorded with
 * the active decision, never acted on. Its own decision, before the run's pre-approved scopes,
 * denial window and question cap, which only the active set's decision goes through.
 */
export interface ShadowOutcome {
  outcome: Decision['outcome'];
  reason: string;
  ruleIds: string[];
  policyHash: string;
  /** Why the candidate failed to decide (it then asks, as any set does); null when it did not. */
  error: string | null;
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
    (id, run_id, conversation_id, tool, tool_call_id, position, arguments_digest, arguments, requester,
      outcome, reason, rule_ids, policy_hash, error, token, shadow)
    values (${sql.placeholder('id')}, ${sql.placeholder('runId')}, ${sql.placeholder('conversationId')},
      ${sql.placeholder('tool')}, ${sql.placeholder('toolCallId')}, ${sql.placeholder('position')}::int, ${sql.placeholder('argumentsDigest')},
      ${sql.placeholder('arguments')}::jsonb, ${sql.placeholder('requester')}, ${sql.placeholder('outcome')}, ${sql.placeholder('reason')}, ${sql.placeholder('ruleIds')}::jsonb,
      ${sql.placeholder('policyHash')}, ${sql.placeholder('error')}, ${sql.placeholder('token')},
      ${sql.placeholder('shadow')}::jsonb)`,
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
    // JSON null, not SQL NULL: a row without arguments is one recorded before they were kept.
    arguments: JSON.stringify(record.arguments ?? null),
    ruleIds: jsonParameter(record.ruleIds),
    shadow: record.shadow === null ? null : JSON.stringify(record.shadow),
  }).then(() => undefined);
  const key = storage.auditKey();
  // The audit entry keeps the digest, as before: the arguments themselves stay in the table.
  const { arguments: _arguments, requester: _requester, shadow, ...kept } = record;
  const audit = shadow === null ? kept : { ...kept, shadow };
  const audited =
    key === undefined
      ? undefined
      : appendAuditEvent(
          tx,
          { event: 'policy-decision', ...audit },
          // The question's own entries keep its token; the decision names it in its data.
          { key, chain: POLICY_AUDIT_CHAIN },
        );
  await Promise.all([inserted, audited]);
}

/** The decisions made in a run, oldest first. */
export async function decisionsOf(db: Db, runId: string): Promise<DecisionRecord[]> {
  const rows = rowsOf(
    await db.execute(sql`select id, run_id, conversation_id, tool, tool_call_id, position, arguments_digest,
      arguments, requester, outcome, reason, rule_ids, policy_hash, error, token, shadow, decided_at
      from x_executive.policy_decisions where run_id = ${runId} order by decided_at, id`),
  );
  return rows.map(recordOf);
}

/** A `policy_decisions` row as a {@link DecisionRecord}. */
function recordOf(row: Record<string, unknown>): DecisionRecord {
  return {
    id: String(row.id),
    runId: String(row.run_id),
    conversationId: String(row.conversation_id),
    tool: String(row.tool),
    toolCallId: String(row.tool_call_id),
    position: row.position === null || row.position === undefined ? null : Number(row.position),
    argumentsDigest: String(row.arguments_digest),
    arguments: jsonOf(row.arguments),
    requester: row.requester === null || row.requester === undefined ? null : String(row.requester),
    outcome: String(row.outcome) as Decision['outcome'],
    reason: String(row.reason),
    ruleIds: (typeof row.rule_ids === 'string'
      ? JSON.parse(row.rule_ids)
      : row.rule_ids) as string[],
    policyHash: String(row.policy_hash),
    error: row.error === null || row.error === undefined ? null : String(row.error),
    token: row.token === null || row.token === undefined ? null : String(row.token),
    shadow: (jsonOf(row.shadow) as ShadowOutcome | null) ?? null,
    decidedAt: new Date(String(row.decided_at)),
  };
}

/** A jsonb column's value (PGlite and postgres.js may hand it back as text). */
function jsonOf(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** What an asking decision is checked against, read in one statement (see {@link priorOf}). */
export interface Prior {
  /** The scopes granted to the run, in the order given. */
  grants: { tool: string; arguments?: Record<string, unknown> }[];
  /** The questions asked in the conversation for the same call, newest first (at most 5). */
  askedTokens: string[];
  /** How many questions the policies asked in the run. */
  questionsAsked: number;
  /** The newest policy version loaded (`recordPolicyVersion`): its number and hash; null: none. */
  newestVersion: { version: number; policyHash: string } | null;
  /**
   * The allow or deny already recorded for the same call at the same position of the run (its
   * turn run again after a crash); null: none.
   */
  decided: { outcome: 'allow' | 'deny'; reason: string } | null;
}

const readPrior = prepareOnce(
  () => sql`select 'grant' as kind, tool, arguments, idx as n, null as token
        from x_executive.policy_grants where run_id = ${sql.placeholder('runId')}
      union all (select 'asked', null, null, null, token from x_executive.policy_decisions
        where conversation_id = ${sql.placeholder('conversationId')} and tool = ${sql.placeholder('tool')}
          and arguments_digest = ${sql.placeholder('argumentsDigest')} and outcome = 'ask' and token is not null
        order by decided_at desc limit 5)
      union all select 'count', null, null, count(*)::int, null from x_executive.policy_decisions
        where run_id = ${sql.placeholder('runId')} and outcome = 'ask'
      union all (select 'version', policy_hash, null, version, null from x_executive.policy_versions
        order by version desc limit 1)
      union all (select 'decided', null,
          jsonb_build_object('outcome', outcome, 'reason', reason), null, null
        from x_executive.policy_decisions
        where run_id = ${sql.placeholder('runId')} and position = ${sql.placeholder('position')}::int
          and tool = ${sql.placeholder('tool')} and arguments_digest = ${sql.placeholder('argumentsDigest')}
          and outcome <> 'ask' order by decided_at limit 1)`,
);

/**
 * The run's grants, the same call's earlier questions, the run's question count, the newest
 * loaded policy version and the decision already recorded for the call at `position`, in one
 * round trip.
 */
export async function priorOf(
  db: Db,
  call: {
    runId: string;
    conversationId: string;
    tool: string;
    argumentsDigest: string;
    position?: number | null;
  },
): Promise<Prior> {
  const rows = await runPrepared(db, readPrior, { ...call, position: call.position ?? null });
  const prior: Prior = {
    grants: [],
    askedTokens: [],
    questionsAsked: 0,
    newestVersion: null,
    decided: null,
  };
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
    else if (row.kind === 'version') {
      prior.newestVersion = { version: Number(row.n), policyHash: String(row.tool) };
    } else if (row.kind === 'decided') {
      const decided = jsonOf(row.arguments) as { outcome: string; reason: string };
      prior.decided = {
        outcome: decided.outcome === 'allow' ? 'allow' : 'deny',
        reason: decided.reason,
      };
    } else prior.questionsAsked = Number(row.n ?? 0);
  }
  prior.grants = grants.sort(([a], [b]) => a - b).map(([, grant]) => grant);
  return prior;
}

/** What people answered the question a decision asked: accepted, declined, cancelled, or nobody in time. */
export type DecisionAnswer = 'accept' | 'decline' | 'cancel' | 'expired';

/** A recorded decision with what people answered its question (null: none asked, or not answered yet). */
export interface AnsweredDecision extends DecisionRecord {
  answer: DecisionAnswer | null;
}

/**
 * A recorded decision as `@x/policy`'s `replayDecisions` decides it again; null for a row
 * recorded without its call's arguments, which cannot be decided again.
 */
export function recordedDecisionOf(past: AnsweredDecision): RecordedDecision | null {
  if (past.arguments === null) return null;
  return {
    id: past.token ?? past.toolCallId,
    call: {
      tool: past.tool,
      input: past.arguments,
      requester: past.requester === null ? null : { name: past.requester },
      run: { id: past.runId, conversation: past.conversationId, kind: 'turn' },
      time: past.decidedAt,
    },
    outcome: past.outcome,
    answer: past.answer,
  };
}

/** How many rows each page of {@link decisionsSince} reads. */
const DECISIONS_PAGE = 2_000;

/**
 * Every decision recorded since `since`, oldest first, each with what people answered its
 * question (`@x/askuser`'s questions), read in pages of one statement each so that tens of
 * thousands of rows never sit in memory at once.
 */
export function decisionsSince(
  db: Db,
  since: Date,
  pageSize: number = DECISIONS_PAGE,
): AsyncGenerator<AnsweredDecision> {
  return answeredDecisions(db, since, pageSize, sql``);
}

/** {@link decisionsSince}, of the rows `where` (an `and ...` condition on `d`) keeps. */
export async function* answeredDecisions(
  db: Db,
  since: Date,
  pageSize: number,
  where: SQL,
): AsyncGenerator<AnsweredDecision> {
  let after: { decidedAt: string; id: string } | null = null;
  for (;;) {
    const rows = rowsOf(
      await db.execute(sql`select d.id, d.run_id, d.conversation_id, d.tool, d.tool_call_id, d.position,
        d.arguments_digest, d.arguments, d.requester, d.outcome, d.reason, d.rule_ids, d.policy_hash,
        d.error, d.token, d.shadow, d.decided_at, d.decided_at::text as decided_key,
        case
          when p.token is null then null
          when p.resumed_at is null then case when p.deadline_at < now() then 'expired' end
          when p.deadline_at is not null and p.answered_by is null and p.resumed_at >= p.deadline_at
            then 'expired'
          else p.resumed_answer->>'action'
        end as answer
        from x_executive.policy_decisions d
        left join aura.paused_states p on p.token = d.token
        where d.decided_at >= ${since.toISOString()}::timestamptz ${where}
          ${after === null ? sql`` : sql`and (d.decided_at, d.id) > (${after.decidedAt}::timestamptz, ${after.id})`}
        order by d.decided_at, d.id limit ${pageSize}`),
    );
    for (const row of rows) {
      const answer = row.answer === null || row.answer === undefined ? null : String(row.answer);
      yield { ...recordOf(row), answer: answerOf(answer) };
    }
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) return;
    after = { decidedAt: String(last.decided_key), id: String(last.id) };
  }
}

/** A stored answer's action as a {@link DecisionAnswer} (an unknown action counts as declined). */
function answerOf(action: string | null): DecisionAnswer | null {
  if (action === null) return null;
  if (action === 'accept' || action === 'cancel' || action === 'expired') return action;
  return 'decline';
}
