import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  deferPolicySet,
  loadPolicySet,
  PolicyError,
  type PolicyErrorCode,
  readPolicySources,
} from '../src/index.js';
import { payments, tools } from './fixtures.js';

/** The PolicyError that loading one file throws. */
function refusal(text: string, name = 'bad.cedar'): PolicyError {
  try {
    loadPolicySet({
      tools,
      sources: [
        { name: 'pay.cedar', text: payments },
        { name, text },
      ],
    });
  } catch (err) {
    if (PolicyError.is(err)) return err;
    throw err;
  }
  throw new Error('the set was loaded');
}

const permit = 'permit (principal, action == Action::"pay", resource);';

describe("a file that does not parse or validate is refused with file, line and Cedar's message", () => {
  it('refuses a syntax error', () => {
    const err = refusal(
      `// first\n${permit}\n\npermit (principal, action, resource) when { context.input == };\n`,
    );
    expect(err.code).toBe('invalid_policy');
    expect(err.location).toEqual({ file: 'bad.cedar', line: 4, column: 62 });
    expect(err.message).toMatch(
      /^\[@x\/policy\] bad\.cedar:4:62: failed to parse policies from string: unexpected token `}`/,
    );
  });

  it("refuses an unknown attribute, with Cedar's help", () => {
    const err = refusal(
      `${permit}\n\npermit (principal, action == Action::"pay", resource)\nwhen { context.input.amout > 5 };\n`,
    );
    expect(err.code).toBe('invalid_policy');
    expect(err.location?.line).toBe(4);
    expect(err.message).toContain('bad.cedar:4:');
    expect(err.message).toContain('attribute `input.amout` in context for Action::"pay" not found');
    expect(err.message).toContain('did you mean `amount`?');
  });

  it('refuses an unknown tool', () => {
    const err = refusal('permit (principal, action == Action::"wire", resource);');
    expect(err.code).toBe('invalid_policy');
    expect(err.message).toContain('bad.cedar:1:');
    expect(err.message).toMatch(/Action::"wire"/);
  });

  it('refuses a type error: a decimal compared with <', () => {
    const err = refusal(
      `permit (principal, action == Action::"pay", resource)\nwhen { context.input has fee && context.input.fee < decimal("1.0") };`,
    );
    expect(err.code).toBe('invalid_policy');
    expect(err.location?.line).toBe(2);
  });

  it('refuses a template', () => {
    const err = refusal('permit (principal == ?principal, action, resource);');
    expect(err.code).toBe('invalid_policy');
    expect(err.message).toContain('bad.cedar:1:1: static policy set includes a template');
  });
});

describe('an annotation out of range is refused', () => {
  it.each<[string, string]>([
    ['@ask @deadline("-5m")', '@deadline: "-5m": expected a positive duration'],
    ['@ask @deadline("0s")', '@deadline: "0s": expected a positive duration'],
    ['@ask @quorum("0")', '@quorum: "0": expected M or M:D'],
    ['@ask @quorum("2:0")', '@quorum: "2:0": expected M or M:D'],
    ['@ask @quorum("1000")', '@quorum: "1000": expected M or M:D'],
    ['@ask @remind("soon")', '@remind: "soon": expected a positive duration'],
    ['@ask @escalate("8h")', '@escalate: "8h": expected DURATION:WHO'],
    ['@ask @escalate("8h:")', '@escalate: "": expected roles and @names'],
    ['@ask @audience("")', '@audience: "": expected roles and @names'],
    ['@ask @audience("fin ance!")', '@audience: "fin ance!": expected roles and @names'],
    [
      '@ask @deadline("1h") @default("approve")',
      '@default: "approve": expected decline, cancel or accept:TEXT',
    ],
    ['@ask @default("decline")', '@default: needs a @deadline'],
    ['@ask @requesterMayNotAnswer("yes")', '@requesterMayNotAnswer: takes no value'],
    ['@severity("urgent")', '@severity: "urgent": expected one of low, medium, high, critical'],
    ['@quorum("2")', '@quorum: only a rule that asks (@ask) sets this'],
    ['@audience("finance")', '@audience: only a rule that asks (@ask) sets this'],
    ['@quorom("2")', '@quorom: unknown annotation'],
    ['@id("")', '@id: "" is not a rule id'],
    ['@reason("")', '@reason: give 1 to 500 characters'],
  ])('refuses %s', (annotations, why) => {
    const err = refusal(`// a comment\n${annotations}\n${permit}`);
    expect(err.code).toBe('invalid_annotation');
    expect(err.reason).toContain(`bad.cedar:2: ${why}`);
    expect(err.location).toEqual({ file: 'bad.cedar', line: 2, column: 1 });
  });

  it('refuses @ask on a forbid rule', () => {
    const err = refusal('@ask forbid (principal, action, resource);');
    expect(err.reason).toBe('bad.cedar:1: @ask: a forbid rule denies; only a permit rule asks');
  });

  it('refuses an id used twice, naming both places', () => {
    const err = refusal(`@id("pay-small") ${permit}`);
    expect(err.code).toBe('invalid_annotation');
    expect(err.reason).toBe(
      'bad.cedar:1: @id: "pay-small" is also the id of the rule at pay.cedar:1',
    );
  });
});

describe('bad options are refused', () => {
  const expectCode = (code: PolicyErrorCode, load: () => unknown, text: string | RegExp) => {
    try {
      load();
    } catch (err) {
      expect(PolicyError.hasCode(err, code)).toBe(true);
      expect((err as PolicyError).reason).toMatch(text);
      return;
    }
    throw new Error('loaded');
  };

  it('refuses tools it cannot type, naming the tool and the path', () => {
    const anyOf = {
      name: 'x',
      inputSchema: { type: 'object', properties: { a: { anyOf: [{ type: 'string' }] } } },
    };
    expectCode(
      'unsupported_schema',
      () => loadPolicySet({ tools: [anyOf] }),
      'tool "x", input.a: "anyOf" has no Cedar type',
    );
    const untyped = { name: 'x', inputSchema: { type: 'object', properties: { a: {} } } };
    expectCode(
      'unsupported_schema',
      () => loadPolicySet({ tools: [untyped] }),
      'tool "x", input.a: give exactly one type',
    );
    const notObject = { name: 'x', inputSchema: { type: 'string' } };
    expectCode(
      'unsupported_schema',
      () => loadPolicySet({ tools: [notObject] }),
      'tool "x", input: the schema is not an object',
    );
  });

  it('refuses no tools, a bad tool name, a tool twice, a source twice, a bad admin role', () => {
    expectCode('invalid_argument', () => loadPolicySet({ tools: [] }), 'give at least one tool');
    expectCode(
      'invalid_argument',
      () => loadPolicySet({ tools: [{ name: 'a b', inputSchema: {} }] }),
      'is not a tool name',
    );
    expectCode(
      'invalid_argument',
      () => loadPolicySet({ tools: [tools[0]!, tools[0]!] }),
      '"pay" is given twice',
    );
    const twice = [
      { name: 'a', text: '' },
      { name: 'a', text: '' },
    ];
    expectCode(
      'invalid_argument',
      () => loadPolicySet({ tools, sources: twice }),
      '"a" is given twice',
    );
    expectCode(
      'invalid_argument',
      () => loadPolicySet({ tools, adminRole: 'the admins' }),
      /adminRole/,
    );
  });
});

describe("the set's hash", () => {
  it('is the same for the same set, whatever the order, and changes with any rule', () => {
    const a = { name: 'a.cedar', text: permit };
    const b = { name: 'b.cedar', text: `@id("b") ${permit}` };
    const one = loadPolicySet({ tools, sources: [a, b] });
    const reordered = loadPolicySet({ tools: [...tools].reverse(), sources: [b, a] });
    expect(one.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(loadPolicySet({ tools, sources: [b, a] }).hash).toBe(one.hash);
    expect(reordered.hash).not.toBe(one.hash);
    const changed = loadPolicySet({ tools, sources: [a, { ...b, text: `@id("c") ${permit}` }] });
    expect(changed.hash).not.toBe(one.hash);
    expect(loadPolicySet({ tools, sources: [a, b], unmatched: 'deny' }).hash).not.toBe(one.hash);
  });

  it('is carried by every decision, and two loaded sets decide each by its own rules', () => {
    const allow = loadPolicySet({ tools, sources: [{ name: 'a.cedar', text: permit }] });
    const deny = loadPolicySet({
      tools,
      sources: [{ name: 'd.cedar', text: 'forbid (principal, action, resource);' }],
    });
    const call = {
      tool: 'pay',
      input: { amount: 1, payee: 'acme' },
      requester: null,
      run: { id: 'r', conversation: 'c', kind: 'turn' },
    };
    expect(allow.decide(call)).toMatchObject({ outcome: 'allow', policyHash: allow.hash });
    expect(deny.decide(call)).toMatchObject({ outcome: 'deny', policyHash: deny.hash });
  });
});

describe('a deferred set', () => {
  const call = {
    tool: 'pay',
    input: { amount: 20, payee: 'acme' },
    requester: null,
    run: { id: 'r', conversation: 'c', kind: 'turn' },
  };

  it('decides, hashes and lists its rules as the same set loaded now', () => {
    const options = { tools, sources: [{ name: 'pay.cedar', text: payments }] };
    const now = loadPolicySet(options);
    const deferred = deferPolicySet(options);
    expect(deferred.decide(call)).toEqual(now.decide(call));
    expect(deferred.hash).toBe(now.hash);
    expect(deferred.rules).toEqual(now.rules);
    expect(deferred.schemaText).toBe(now.schemaText);
  });

  it('is refused at its first use, by the error loading it now throws, and at each use after', () => {
    const options = { tools, sources: [{ name: 'bad.cedar', text: 'permit (principal, action' }] };
    const deferred = deferPolicySet(options);
    const now = (() => {
      try {
        loadPolicySet(options);
      } catch (err) {
        return err;
      }
    })();
    expect(PolicyError.is(now)).toBe(true);
    expect(() => deferred.decide(call)).toThrow(now as PolicyError);
    expect(() => deferred.hash).toThrow(now as PolicyError);
  });
});

describe('the schema and the rules', () => {
  it("shows the generated schema in Cedar's syntax and the rules with where they are", () => {
    const policies = loadPolicySet({
      tools,
      sources: [
        { name: 'pay.cedar', text: payments },
        { name: 'x.cedar', text: permit },
      ],
    });
    expect(policies.schemaText).toContain('action "pay" appliesTo');
    expect(policies.schemaText).toContain('amount: __cedar::Long');
    expect(policies.schemaText).toContain('fee?: __cedar::decimal');
    expect(policies.rules.map((rule) => [rule.id, rule.outcome])).toEqual([
      ['pay-small', 'allow'],
      ['pay-medium', 'ask'],
      ['pay-over-1000', 'ask'],
      ['payee-list', 'deny'],
      ['x.cedar:1', 'allow'],
    ]);
    expect(policies.rules[1]?.location).toEqual({ file: 'pay.cedar', line: 6, column: 1 });
  });
});

describe('readPolicySources', () => {
  it("reads a folder's .cedar files in name order, and single files", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'policy-sources-'));
    try {
      await writeFile(path.join(dir, 'b.cedar'), permit);
      await writeFile(path.join(dir, 'a.cedar'), payments);
      await writeFile(path.join(dir, 'notes.txt'), 'not a policy');
      const sources = await readPolicySources([dir, path.join(dir, 'notes.txt')]);
      expect(sources.map((s) => path.basename(s.name))).toEqual([
        'a.cedar',
        'b.cedar',
        'notes.txt',
      ]);
      expect(sources[0]?.text).toBe(payments);
      const err = (() => {
        try {
          loadPolicySet({ tools, sources });
        } catch (e) {
          return e as PolicyError;
        }
      })();
      expect(err?.code).toBe('invalid_policy');
      expect(err?.location?.file).toBe(path.join(dir, 'notes.txt'));
      const missing = path.join(dir, 'missing.cedar');
      await expect(readPolicySources([missing])).rejects.toMatchObject({
        code: 'invalid_argument',
        reason: `cannot read policies from ${JSON.stringify(missing)} (ENOENT)`,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tools described with zod', () => {
  it('takes the JSON schema z.toJSONSchema makes: nested objects, arrays, enums, optional and nullable', () => {
    const input = z.object({
      to: z.string().min(1),
      amount: z.number(),
      currency: z.enum(['EUR', 'USD']),
      lines: z.array(z.object({ sku: z.string(), qty: z.int() })).max(5),
      note: z.string().optional(),
      ref: z.string().nullable(),
    });
    const tool = { name: 'transfer', inputSchema: z.toJSONSchema(input) };
    const text = `@id("eur") @reason("euro transfers with few lines")
permit (principal, action == Action::"transfer", resource)
when { context.input.currency == "EUR" && context.input.lines.contains({ sku: "a", qty: 1 }) && !(context.input has ref) };`;
    const policies = loadPolicySet({ tools: [tool], sources: [{ name: 'z.cedar', text }] });
    const call = (args: unknown) =>
      policies.decide({
        tool: 'transfer',
        input: args,
        requester: null,
        run: { id: 'r', conversation: 'c', kind: 'turn' },
      });
    const args = {
      to: 'x',
      amount: 12.5,
      currency: 'EUR',
      lines: [{ sku: 'a', qty: 1 }],
      ref: null,
    };
    expect(call(args)).toMatchObject({ outcome: 'allow', ruleIds: ['eur'] });
    expect(call({ ...args, ref: 'r-1' })).toMatchObject({
      outcome: 'ask',
      reason: 'no rule matched',
    });
    expect(call({ ...args, currency: 'GBP' })).toMatchObject({
      outcome: 'deny',
      reason:
        'the arguments do not match the tool\'s schema: input.currency: expected one of ["EUR","USD"]',
    });
    expect(call({ ...args, lines: [{ sku: 'a', qty: 1.5 }] }).reason).toContain(
      'input.lines[0].qty: expected an integer',
    );
  });
});
