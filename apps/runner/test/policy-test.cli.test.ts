import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

// `runner policy test`: fixture files decided with the active policies or --policy's, every
// failing case printed plainly, exit 1 on any failure, 2 for a refused file; for CI.

const PAYMENTS = `@id("small") @reason("transfers under 50 need nobody")
permit (principal, action == Action::"transfer_funds", resource)
when { context.input.amount.lessThan(decimal("50.0")) };

@id("large") @reason("transfers of 50 or more need two of finance")
@ask @audience("finance") @quorum("2")
permit (principal, action == Action::"transfer_funds", resource)
when { context.input.amount.greaterThanOrEqual(decimal("50.0")) };

@id("blocked") @reason("that account is blocked")
forbid (principal, action == Action::"transfer_funds", resource)
when { context.input.to == "blocked" };
`;

const transfer = (amount: number, to: string, expect: object, name = `${amount} to ${to}`) => ({
  name,
  call: { tool: 'transfer_funds', input: { amount, to, currency: 'EUR' } },
  requester: { name: 'ada', roles: ['staff'] },
  expect,
});
const fixtureFile = (cases: unknown[]) => JSON.stringify({ version: 1, cases });

describe('runner policy test', { timeout: 120_000 }, () => {
  let dir: string;
  let policyFile: string;
  let passing: string;
  let failing: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'runner-policy-test-'));
    policyFile = path.join(dir, 'payments.cedar');
    await writeFile(policyFile, PAYMENTS);
    passing = path.join(dir, 'passing');
    failing = path.join(dir, 'failing');
    await mkdir(passing);
    await mkdir(failing);
    await writeFile(
      path.join(passing, 'transfers.json'),
      fixtureFile([
        transfer(20, 'acme', { outcome: 'allow', ruleIds: ['small'] }),
        transfer(500, 'acme', {
          outcome: 'ask',
          ruleIds: ['large'],
          audience: { roles: ['finance'] },
          quorum: 2,
        }),
        transfer(20, 'blocked', { outcome: 'deny', ruleIds: ['blocked'] }),
      ]),
    );
    await writeFile(
      path.join(failing, 'transfers.json'),
      fixtureFile([
        transfer(20, 'acme', { outcome: 'allow' }),
        transfer(500, 'ac\u001b[2Jme\u202e', { outcome: 'allow' }, 'a large one let through'),
      ]),
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('passes with --policy and with RUNNER_POLICY, naming the set it judged', async () => {
    const flag = await runCli(['policy', 'test', passing, '--policy', policyFile]);
    expect(flag.code, flag.stderr).toBe(0);
    expect(flag.stdout).toMatch(
      new RegExp(`^ok: 3 cases passed, 0 failed, against ${policyFile} \\(sha256:\\w+\\)\\n$`),
    );
    const env = await runCli(['policy', 'test', passing, '--json'], {
      env: { RUNNER_POLICY: policyFile },
    });
    expect(env.code, env.stderr).toBe(0);
    expect(env.events).toEqual([
      { type: 'policy-tested', cases: 3, failed: 0, policyHash: expect.stringMatching(/^sha256:/) },
    ]);
  });

  it('prints each failure plainly, its arguments escaped, and exits 1', async () => {
    const result = await runCli(['policy', 'test', failing, '--policy', policyFile]);
    expect(result.code).toBe(1);
    const file = path.join(failing, 'transfers.json');
    expect(result.stdout).toBe(
      [
        `FAIL ${file}: a large one let through`,
        '  transfer_funds {"amount":500,"to":"ac\\u001b[2Jme\\u202e","currency":"EUR"}',
        '  expected allow, got ask (rule "large": transfers of 50 or more need two of finance)',
        `FAILED: 1 case passed, 1 failed, against ${policyFile} (${/\(sha256:\w+\)/.exec(result.stdout)?.[0].slice(1, -1)})`,
        '',
      ].join('\n'),
    );
    expect(result.stdout.includes('\u001b') || result.stdout.includes('\u202e')).toBe(false);
  });

  it('the active policies by default: with no rule, every call asks anyone', async () => {
    const result = await runCli(['policy', 'test', failing, '--json']);
    expect(result.code).toBe(1);
    expect(result.events.filter((e) => e.type === 'policy-test-failed')).toHaveLength(2);
  });

  it('refuses a bad fixture file and a bad policy file with exit 2, naming what is wrong', async () => {
    const bad = path.join(dir, 'bad.json');
    await writeFile(bad, fixtureFile([transfer(20, 'acme', { outcome: 'perhaps' })]));
    const fixture = await runCli(['policy', 'test', bad, '--policy', policyFile]);
    expect(fixture.code).toBe(2);
    expect(fixture.stderr).toMatch(
      new RegExp(`^error: fixture file "${bad}" is not valid: cases\\.0\\.expect\\.outcome: `),
    );
    const cedar = path.join(dir, 'broken.cedar');
    await writeFile(cedar, 'permit (principal, action == Action::"no_such_tool", resource);');
    const policy = await runCli(['policy', 'test', passing, '--policy', cedar]);
    expect(policy.code).toBe(2);
    expect(policy.stderr).toContain(cedar);
    const usage = await runCli(['policy', 'rehearse']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe(
      'error: policy takes test, explain, replay, load, versions or shadow, not "rehearse"\n',
    );
  });
});
