import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadPolicySet,
  PolicyError,
  parsePolicyFixtures,
  readPolicyFixtures,
  runPolicyFixtures,
} from '../src/index.js';
import { payments, tools } from './fixtures.js';

const policies = loadPolicySet({ tools, sources: [{ name: 'pay.cedar', text: payments }] });
const ada = { name: 'ada', roles: ['staff'] };

const file = (cases: unknown[]) => JSON.stringify({ version: 1, cases });
const payCase = (amount: number, expect: object, payee = 'acme') => ({
  name: `pay ${amount} to ${payee}`,
  call: { tool: 'pay', input: { amount, payee } },
  requester: ada,
  expect,
});

describe('policy fixtures', () => {
  it('passes cases whose decisions match their outcome, rules, audience and quorum', () => {
    const fixtures = parsePolicyFixtures(
      'pay.json',
      file([
        payCase(20, { outcome: 'allow', ruleIds: ['pay-small'] }),
        payCase(500, { outcome: 'ask', audience: { roles: ['finance'] }, quorum: null }),
        payCase(5000, { outcome: 'ask', ruleIds: ['pay-over-1000'], quorum: 2 }),
        payCase(20, { outcome: 'deny', ruleIds: ['payee-list'] }, 'initech'),
      ]),
    );
    const results = runPolicyFixtures(policies, fixtures);
    expect(results.map((result) => result.failures)).toEqual([[], [], [], []]);
    expect(results[0]?.fixture.file).toBe('pay.json');
    expect(results[0]?.decision.policyHash).toBe(policies.hash);
  });

  it('says plainly how each failing case differs from what it expects', () => {
    const results = runPolicyFixtures(
      policies,
      parsePolicyFixtures(
        'pay.json',
        file([
          payCase(20, { outcome: 'ask', ruleIds: ['pay-medium'] }),
          payCase(5000, { outcome: 'ask', audience: { roles: ['ops'], names: [] }, quorum: 1 }),
          payCase(20, { outcome: 'allow', quorum: 2 }),
        ]),
      ),
    );
    expect(results.map((result) => result.failures)).toEqual([
      [
        'expected ask, got allow (rule "pay-small": payments under 50 need nobody)',
        'expected rules "pay-medium", got "pay-small"',
      ],
      ['expected audience roles "ops", got "finance"', 'expected a quorum of 1, got 2'],
      ["expected a question's audience or quorum, but nobody is asked"],
    ]);
  });

  it('passes the time, the counters and a null requester to the policies', () => {
    const hours = loadPolicySet({
      tools,
      sources: [
        {
          name: 'hours.cedar',
          text: `@id("night") @reason("no payments at night") forbid (principal, action == Action::"pay", resource) when { context.time.hour < 6 };
@id("many") @reason("too many questions") forbid (principal, action == Action::"pay", resource) when { context.counters.questions > 3 };
@id("anyone") @reason("nobody asked") forbid (principal == User::"", action == Action::"pay", resource);
@id("day") @reason("fine") permit (principal, action == Action::"pay", resource);`,
        },
      ],
    });
    const call = { tool: 'pay', input: { amount: 1, payee: 'acme' } };
    const fixtures = parsePolicyFixtures(
      'hours.json',
      file([
        {
          name: 'night',
          call,
          requester: ada,
          time: '2026-01-01T03:00:00Z',
          expect: { outcome: 'deny', ruleIds: ['night'] },
        },
        {
          name: 'day',
          call,
          requester: ada,
          time: '2026-01-01T12:00:00Z',
          expect: { outcome: 'allow' },
        },
        {
          name: 'many',
          call,
          requester: ada,
          time: '2026-01-01T12:00:00Z',
          counters: { questions: 4 },
          expect: { outcome: 'deny', ruleIds: ['many'] },
        },
        {
          name: 'nobody',
          call,
          time: '2026-01-01T12:00:00Z',
          expect: { outcome: 'deny', ruleIds: ['anyone'] },
        },
      ]),
    );
    expect(runPolicyFixtures(hours, fixtures).map((result) => result.failures)).toEqual([
      [],
      [],
      [],
      [],
    ]);
  });

  it('refuses a bad fixture file naming the file and what is wrong where', () => {
    const refused = (text: string) => {
      try {
        parsePolicyFixtures('bad.json', text);
      } catch (err) {
        expect(PolicyError.hasCode(err, 'invalid_argument')).toBe(true);
        return (err as PolicyError).reason;
      }
      throw new Error('not refused');
    };
    expect(refused('{')).toMatch(/^fixture file "bad.json" is not JSON: /);
    expect(refused(file([payCase(20, { outcome: 'maybe' })]))).toMatch(
      /^fixture file "bad.json" is not valid: cases\.0\.expect\.outcome: /,
    );
    expect(refused(JSON.stringify({ version: 2, cases: [] }))).toMatch(/version: .*; cases: /);
    expect(refused(file([{ ...payCase(20, { outcome: 'allow' }), extra: 1 }]))).toMatch(
      /cases\.0: .*"extra"/,
    );
  });

  describe('read from a folder', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'policy-fixtures-'));
      await writeFile(path.join(dir, 'b.json'), file([payCase(5000, { outcome: 'ask' })]));
      await writeFile(path.join(dir, 'a.json'), file([payCase(20, { outcome: 'allow' })]));
      await writeFile(path.join(dir, 'notes.txt'), 'not a fixture');
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it("reads a folder's .json files in name order", async () => {
      const fixtures = await readPolicyFixtures([dir]);
      expect(fixtures.map((f) => [path.basename(f.file), f.name])).toEqual([
        ['a.json', 'pay 20 to acme'],
        ['b.json', 'pay 5000 to acme'],
      ]);
    });

    it('refuses a missing path and a folder with no fixture file', async () => {
      await expect(readPolicyFixtures([path.join(dir, 'nope')])).rejects.toThrow(/ENOENT/);
      const empty = await mkdtemp(path.join(tmpdir(), 'policy-fixtures-empty-'));
      await expect(readPolicyFixtures([empty])).rejects.toThrow(/holds no fixture file/);
      await rm(empty, { recursive: true });
    });
  });
});
