import { parseArgs } from 'node:util';
import { decisionOfQuestion } from '@x/executive';
import {
  PolicyError,
  type PolicySet,
  type Rule,
  readPolicyFixtures,
  runPolicyFixtures,
} from '@x/policy';
import { setting, VARIABLES } from '../config/index.js';
import { notFoundError, usageError } from '../errors.js';
import { runnerPolicies } from '../executive/index.js';
import { plural } from '../terminal/output.js';
import { type Command, type Context, globalOptions, withStorage } from './command.js';

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
    const same = active.hash === decision.policyHash;
    const rules = same ? active.rules.filter((rule) => decision.ruleIds.includes(rule.id)) : [];
    ctx.out.record(
      { type: 'policy-explained', decision, rules, activeHash: active.hash },
      [
        `question ${token}: ${decision.outcome}, ${decision.decidedAt.toISOString()}`,
        `  reason: ${decision.reason}`,
        ...(decision.error ? [`  deciding failed: ${decision.error}`] : []),
        `  call: ${decision.tool} (${decision.toolCallId}), run ${decision.runId}, arguments ${decision.argumentsDigest}`,
        `  policy set: ${decision.policyHash}${same ? ' (the active one)' : ` (not the active one, ${active.hash}: its rules are not shown)`}`,
        decision.ruleIds.length === 0
          ? '  matching rules: none'
          : `  matching rules: ${decision.ruleIds.map((id) => `"${id}"`).join(', ')}`,
        ...rules.map(ruleLine),
      ].join('\n'),
    );
    return 0;
  });
}

/** `runner policy test DIR`, `policy explain TOKEN`: the policies, checked and explained. */
export const policy: Command = async (ctx, args) => {
  const [sub, ...rest] = args;
  try {
    if (sub === 'test') return await test(ctx, rest);
    if (sub === 'explain') return await explain(ctx, rest);
  } catch (error) {
    if (PolicyError.is(error)) throw usageError(error.reason);
    throw error;
  }
  throw usageError(
    `policy takes test or explain, not ${sub === undefined ? 'nothing' : `"${sub}"`}`,
  );
};
