import { parseArgs } from 'node:util';
import { PolicyError, type PolicySet, readPolicyFixtures, runPolicyFixtures } from '@x/policy';
import { setting, VARIABLES } from '../config/index.js';
import { usageError } from '../errors.js';
import { runnerPolicies } from '../executive/index.js';
import { plural } from '../terminal/output.js';
import { type Command, type Context, globalOptions } from './command.js';

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

/** `runner policy test DIR`: the policies, checked against fixture files. */
export const policy: Command = async (ctx, args) => {
  const [sub, ...rest] = args;
  try {
    if (sub === 'test') return await test(ctx, rest);
  } catch (error) {
    if (PolicyError.is(error)) throw usageError(error.reason);
    throw error;
  }
  throw usageError(`policy takes test, not ${sub === undefined ? 'nothing' : `"${sub}"`}`);
};
