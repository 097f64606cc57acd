import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Decision } from './decision.js';
import { PolicyError } from './errors.js';
import type { DecisionInput, PolicySet } from './policy-set.js';

const nameSchema = z.string().min(1).max(200);

const caseSchema = z.strictObject({
  /** What the case shows, printed when it fails. */
  name: z.string().min(1).max(500),
  call: z.strictObject({ tool: nameSchema, input: z.unknown() }),
  requester: z
    .strictObject({ name: z.string().max(200), roles: z.array(nameSchema).optional() })
    .nullable()
    .default(null),
  run: z
    .strictObject({ id: nameSchema, conversation: nameSchema, kind: nameSchema })
    .default({ id: 'fixture-run', conversation: 'fixture-conversation', kind: 'turn' }),
  time: z.iso.datetime({ offset: true }).optional(),
  counters: z
    .strictObject({
      questions: z.int().min(0).optional(),
      calls: z.int().min(0).optional(),
      declines: z.int().min(0).optional(),
    })
    .optional(),
  expect: z.strictObject({
    outcome: z.enum(['allow', 'deny', 'ask']),
    /** The matching rules' ids, in any order. */
    ruleIds: z.array(nameSchema).optional(),
    /** For an ask: who may answer, each list in any order; a list not given is not checked. */
    audience: z
      .strictObject({
        roles: z.array(nameSchema).optional(),
        names: z.array(nameSchema).optional(),
      })
      .optional(),
    /** For an ask: how many approvals it needs; null: the first answer decides. */
    quorum: z.int().min(1).nullable().optional(),
  }),
});

const fileSchema = z.strictObject({
  version: z.literal(1),
  cases: z.array(caseSchema).min(1).max(10_000),
});

/** One fixture case: a call, who asked, and the outcome the policies must decide. */
export interface PolicyFixture {
  /** The file the case came from. */
  file: string;
  /** What the case shows, printed when it fails. */
  name: string;
  call: { tool: string; input: unknown };
  /** For whom the call is made; null: nobody. */
  requester: { name: string; roles?: string[] | undefined } | null;
  run: { id: string; conversation: string; kind: string };
  /** An ISO time; absent: now. */
  time?: string | undefined;
  counters?:
    | { questions?: number | undefined; calls?: number | undefined; declines?: number | undefined }
    | undefined;
  expect: {
    outcome: 'allow' | 'deny' | 'ask';
    /** The matching rules' ids, in any order. */
    ruleIds?: string[] | undefined;
    /** For an ask: who may answer, each list in any order; a list not given is not checked. */
    audience?: { roles?: string[] | undefined; names?: string[] | undefined } | undefined;
    /** For an ask: how many approvals it needs; null: the first answer decides. */
    quorum?: number | null | undefined;
  };
}

/** What one fixture case got: its decision, and each way it differs from what was expected. */
export interface PolicyFixtureResult {
  fixture: PolicyFixture;
  decision: Decision;
  /** Empty when the case passed; otherwise one plain sentence per difference. */
  failures: string[];
}

/**
 * Parses one fixture file's text (JSON: `{ "version": 1, "cases": [...] }`, each case a
 * `call` `{ tool, input }`, optionally its `requester`, `run`, `time` and `counters`, and
 * what to `expect`: the `outcome`, optionally `ruleIds`, `audience` and `quorum`).
 * @throws {PolicyError} `invalid_argument` naming the file and what is wrong where.
 */
export function parsePolicyFixtures(file: string, text: string): PolicyFixture[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new PolicyError(
      'invalid_argument',
      `fixture file ${JSON.stringify(file)} is not JSON: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(the file)'}: ${issue.message}`,
    );
    throw new PolicyError(
      'invalid_argument',
      `fixture file ${JSON.stringify(file)} is not valid: ${issues.join('; ')}`,
    );
  }
  return parsed.data.cases.map((fixture): PolicyFixture => ({ ...fixture, file }));
}

/**
 * Reads fixture files: each path a `.json` file, or a folder whose `.json` files (not its
 * subfolders) are read in name order.
 * @throws {PolicyError} `invalid_argument` for a path that cannot be read, a folder with no
 * fixture file, or a file that is not a valid fixture file.
 */
export async function readPolicyFixtures(paths: readonly string[]): Promise<PolicyFixture[]> {
  const fixtures: PolicyFixture[] = [];
  for (const given of paths) {
    let files: string[];
    try {
      files = (await stat(given)).isDirectory()
        ? (await readdir(given))
            .filter((name) => name.endsWith('.json'))
            .sort()
            .map((name) => path.join(given, name))
        : [given];
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new PolicyError(
        'invalid_argument',
        `cannot read fixtures from ${JSON.stringify(given)} (${why})`,
        { cause: err },
      );
    }
    if (files.length === 0) {
      throw new PolicyError(
        'invalid_argument',
        `${JSON.stringify(given)} holds no fixture file (*.json)`,
      );
    }
    for (const file of files)
      fixtures.push(...parsePolicyFixtures(file, await readFile(file, 'utf8')));
  }
  return fixtures;
}

/**
 * Decides every fixture with `policies` and compares each decision with what it expects.
 *
 * @example
 * const results = runPolicyFixtures(policies, await readPolicyFixtures(['policy-tests']));
 * const failed = results.filter((result) => result.failures.length > 0);
 * for (const { fixture, failures } of failed) console.error(`${fixture.file}: ${fixture.name}: ${failures.join('; ')}`);
 * process.exitCode = failed.length > 0 ? 1 : 0;
 */
export function runPolicyFixtures(
  policies: PolicySet,
  fixtures: readonly PolicyFixture[],
): PolicyFixtureResult[] {
  return fixtures.map((fixture) => {
    const decision = policies.decide(decisionInputOf(fixture));
    return { fixture, decision, failures: differences(fixture.expect, decision) };
  });
}

function decisionInputOf(fixture: PolicyFixture): DecisionInput {
  return {
    tool: fixture.call.tool,
    input: fixture.call.input,
    requester: fixture.requester,
    run: fixture.run,
    ...(fixture.time === undefined ? {} : { time: new Date(fixture.time) }),
    ...(fixture.counters === undefined ? {} : { counters: fixture.counters }),
  };
}

function differences(expected: PolicyFixture['expect'], decision: Decision): string[] {
  const failures: string[] = [];
  if (decision.outcome !== expected.outcome) {
    failures.push(`expected ${expected.outcome}, got ${decision.outcome} (${decision.reason})`);
  }
  if (expected.ruleIds && !sameSet(expected.ruleIds, decision.ruleIds)) {
    failures.push(`expected rules ${listed(expected.ruleIds)}, got ${listed(decision.ruleIds)}`);
  }
  if (expected.audience === undefined && expected.quorum === undefined) return failures;
  if (decision.outcome !== 'ask') {
    failures.push(`expected a question's audience or quorum, but nobody is asked`);
    return failures;
  }
  for (const key of ['roles', 'names'] as const) {
    const want = expected.audience?.[key];
    const got = decision.ask.audience[key];
    if (want && !sameSet(want, got)) {
      failures.push(`expected audience ${key} ${listed(want)}, got ${listed(got)}`);
    }
  }
  const quorum = decision.ask.quorum?.approvals ?? null;
  if (expected.quorum !== undefined && expected.quorum !== quorum) {
    failures.push(`expected a quorum of ${expected.quorum ?? 'none'}, got ${quorum ?? 'none'}`);
  }
  return failures;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sorted = (list: readonly string[]) => JSON.stringify([...new Set(list)].sort());
  return sorted(a) === sorted(b);
}

function listed(ids: readonly string[]): string {
  return ids.length === 0 ? '(none)' : ids.map((id) => JSON.stringify(id)).join(', ');
}
