import { parseArgs } from 'node:util';
import {
  type AnsweredDecision,
  decisionOfQuestion,
  decisionsSince,
  policyVersionOf,
  recordedDecisionOf,
} from '@x/executive';
import {
  durationMs,
  PolicyError,
  type PolicySet,
  type RecordedDecision,
  type ReplayChange,
  type Rule,
  readPolicyFixtures,
  replayDecisions,
  runPolicyFixtures,
} from '@x/policy';
import { setting, VARIABLES } from '../config/index.js';
import { notFoundError, usageError } from '../errors.js';
import { compileRunnerPolicies, runnerPolicies } from '../executive/index.js';
import { plural } from '../terminal/output.js';
import { type Command, type Context, globalOptions, withStorage } from './command.js';
import { policyLoad } from './policy-load.js';
import { policyShadow } from './policy-shadow.js';
import { policyVersionsList } from './policy-versions.js';

/**
 * The policy set a policy command judges: RUNNER_POLICY's (and the question variables') by
 * default, or the Cedar files of `--policy` over the same tools and short form.
 * @throws {RunnerError} `usage` for a file that cannot be read, parsed or validated.
 */
function policySetOf(given: string | undefined): PolicySet {
  if (given === undefined) return runnerPolicies();
  return runnerPolicies({ ...process.env, [VARIABLES.RUNNER_POLICY.name]: given });
}

/** `runner policy test DIR [--policy PATH]`: decides each fixture, printing each failure; exit 1 on any. */
async function test(ctx: Context, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...globalOptions, policy: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length === 0) throw usageError('policy test needs a DIR (or files) of fixtures');
  const policies = policySetOf(values.policy);
  const fixtures = await readPolicyFixtures(positionals);
  const results = runPolicyFixtures(policies, fixtures);
  let failed = 0;
  for (const { fixture, decision, failures } of results) {
    if (failures.length === 0) continue;
    failed++;
    ctx.out.record(
      {
        type: 'policy-test-failed',
        file: fixture.file,
        name: fixture.name,
        call: fixture.call,
        decision,
        failures,
      },
      [
        `FAIL ${fixture.file}: ${fixture.name}`,
        `  ${fixture.call.tool} ${JSON.stringify(fixture.call.input)}`,
        ...failures.map((failure) => `  ${failure}`),
      ].join('\n'),
    );
  }
  const where = values.policy ?? setting(VARIABLES.RUNNER_POLICY) ?? 'the question variables';
  ctx.out.record(
    {
      type: 'policy-tested',
      cases: results.length,
      failed,
      policyHash: policies.hash,
    },
    `${failed === 0 ? 'ok' : 'FAILED'}: ${plural(results.length - failed, 'case')} passed, ${failed} failed, against ${where} (${policies.hash})`,
  );
  return failed === 0 ? 0 : 1;
}

/** A rule as `policy explain` prints it: its outcome, reason, question settings and where it is. */
function ruleLine(rule: Rule): string {
  const settings = Object.entries(rule.ask)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([name, value]) => `${name} ${JSON.stringify(value)}`);
  const where = `${rule.location.file}:${rule.location.line}`;
  return [
    `  rule "${rule.id}" (${rule.outcome}, ${where})${rule.reason ? `: ${rule.reason}` : ''}`,
    ...settings.map((setting) => `    ${setting}`),
  ].join('\n');
}

/** `runner policy explain TOKEN`: the decision that asked a question, with its rules as the active set has them. */
async function explain(ctx: Context, args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, options: globalOptions, allowPositionals: true });
  const [token] = positionals;
  if (!token || positionals.length > 1) throw usageError('policy explain needs one TOKEN');
  return withStorage(ctx, async (storage) => {
    const decision = await decisionOfQuestion(storage.db, token);
    if (!decision) throw notFoundError(`no policy decision asked question ${token}`);
    const active = runnerPolicies();
    const version = await policyVersionOf(storage.db, decision.policyHash);
    const same = active.hash === decision.policyHash;
    const decidedBy = same ? active : version && compileRunnerPolicies(version.sources);
    const rules =
      decidedBy?.rules.filter((rule) => decision.ruleIds.includes(rule.id)) ?? ([] as Rule[]);
    const loaded = version
      ? ` (version ${version.version}, loaded by ${version.loadedBy} at ${version.loadedAt.toISOString()})`
      : '';
    ctx.out.record(
      {
        type: 'policy-explained',
        decision,
        rules,
        activeHash: active.hash,
        ...(version ? { version: { ...version, sources: undefined } } : {}),
      },
      [
        `question ${token}: ${decision.outcome}, ${decision.decidedAt.toISOString()}`,
        `  reason: ${decision.reason}`,
        ...(decision.error ? [`  deciding failed: ${decision.error}`] : []),
        `  call: ${decision.tool} (${decision.toolCallId}), run ${decision.runId}, arguments ${decision.argumentsDigest}`,
        `  policy set: ${decision.policyHash}${same ? ' (the active one)' : decidedBy ? '' : ` (not the active one, ${active.hash}: its rules are not shown)`}${loaded}`,
        decision.ruleIds.length === 0
          ? '  matching rules: none'
          : `  matching rules: ${decision.ruleIds.map((id) => `"${id}"`).join(', ')}`,
        ...rules.map(ruleLine),
      ].join('\n'),
    );
    return 0;
  });
}

/** The migration that started keeping a decision's arguments and requester (older rows cannot be replayed). */
const REPLAYABLE_SINCE = '@x/executive migration 0002_policy_decision_calls';

/** How many changed outcomes `policy replay` prints in text mode (JSON has them all). */
const CHANGES_SHOWN = 20;

/** The recorded decisions that can be decided again, counting those recorded without their call. */
async function* replayable(
  decisions: AsyncIterable<AnsweredDecision>,
  skipped: { count: number },
): AsyncGenerator<RecordedDecision> {
  for await (const past of decisions) {
    const recorded = recordedDecisionOf(past);
    if (recorded === null) skipped.count++;
    else yield recorded;
  }
}

/** One changed outcome as `policy replay` prints it. */
function changeLine({ recorded, now }: ReplayChange): string {
  const answered = recorded.answer === null ? '' : `, people: ${recorded.answer}`;
  return `  ${recorded.id} ${recorded.call.tool} ${JSON.stringify(recorded.call.input)}: ${recorded.outcome}${answered} -> ${now.outcome} (${now.reason})`;
}

/**
 * `runner policy replay FILE_OR_DIR [--since 30d]`: decides every recorded decision of the
 * period again with the candidate Cedar files and prints what would change next to what people
 * answered, and how long it took.
 */
async function replay(ctx: Context, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...globalOptions, since: { type: 'string', default: '30d' } },
    allowPositionals: true,
  });
  const [candidatePath] = positionals;
  if (!candidatePath || positionals.length > 1) {
    throw usageError('policy replay needs one FILE or DIR of Cedar policies');
  }
  const sinceMs = durationMs(values.since);
  if (sinceMs === undefined) {
    throw usageError(`--since takes an age like 30d or 12h, not "${values.since}"`);
  }
  const candidate = policySetOf(candidatePath);
  const since = new Date(Date.now() - sinceMs);
  return withStorage(ctx, async (storage) => {
    const started = performance.now();
    const skipped = { count: 0 };
    const recorded: RecordedDecision[] = [];
    for await (const past of replayable(decisionsSince(storage.db, since), skipped)) {
      recorded.push(past);
    }
    const summary = replayDecisions(candidate, recorded);
    const tookMs = Math.round(performance.now() - started);
    const refused = summary.allowedThoughRefused;
    ctx.out.record(
      {
        type: 'policy-replayed',
        since: since.toISOString(),
        candidateHash: candidate.hash,
        decided: summary.decided,
        asked: summary.asked,
        askedNowAllowed: summary.askedNowAllowed,
        allowedThoughRefused: refused,
        changes: summary.changes,
        notReplayable: skipped.count,
        tookMs,
      },
      [
        `would allow ${summary.askedNowAllowed} of ${plural(summary.asked, 'asked call')}; people declined ${refused.length} of those ${summary.askedNowAllowed}${refused.length === 0 ? '' : ':'}`,
        ...refused.slice(0, CHANGES_SHOWN).map(changeLine),
        `${plural(summary.changes.length, 'outcome')} of ${plural(summary.decided, 'decision')} since ${since.toISOString()} would change${summary.changes.length === 0 ? '' : ':'}`,
        ...summary.changes.slice(0, CHANGES_SHOWN).map(changeLine),
        ...(summary.changes.length > CHANGES_SHOWN
          ? [`  ... and ${summary.changes.length - CHANGES_SHOWN} more (--json lists them all)`]
          : []),
        ...(skipped.count > 0
          ? [
              `${plural(skipped.count, 'decision')} not replayable (recorded before ${REPLAYABLE_SINCE}, without their arguments)`,
            ]
          : []),
        `candidate ${candidatePath} (${candidate.hash}); took ${tookMs} ms`,
      ].join('\n'),
    );
    return 0;
  });
}

/**
 * `runner policy test DIR`, `policy explain TOKEN`, `policy replay FILE`, `policy load FILES`,
 * `policy versions`, `policy shadow`: the policies, checked, explained, loaded, listed and compared.
 */
export const policy: Command = async (ctx, args) => {
  const [sub, ...rest] = args;
  try {
    if (sub === 'test') return await test(ctx, rest);
    if (sub === 'explain') return await explain(ctx, rest);
    if (sub === 'replay') return await replay(ctx, rest);
    if (sub === 'load') return await policyLoad(ctx, rest);
    if (sub === 'shadow') return await policyShadow(ctx, rest);
    if (sub === 'versions') return await policyVersionsList(ctx, rest);
  } catch (error) {
    if (PolicyError.is(error)) throw usageError(error.reason);
    throw error;
  }
  throw usageError(
    `policy takes test, explain, replay, load, versions or shadow, not ${sub === undefined ? 'nothing' : `"${sub}"`}`,
  );
};
