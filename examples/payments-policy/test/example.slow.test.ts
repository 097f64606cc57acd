import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import {
  type FakeLlm,
  namedScripts,
  PROGRAMS_TEST_TIMEOUT_MS,
  printedAsShown,
  promisedOutput,
  type ReadmeRun,
  readmeFakeScript,
  readmeTranscripts,
  runReadme,
  startFakeLlm,
} from '@internal/fake-llm';
import { createTestDatabase, serverForTests } from '@internal/pg-test';
import { decisionsOf, type ExecutiveDatabase, sqlExecutiveStorage } from '@x/executive';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, expect, it } from 'vitest';

const example = fileURLToPath(new URL('..', import.meta.url));
const readmeText = readFileSync(path.join(example, 'README.md'), 'utf8');
const server = await serverForTests();
// The model servers, the README's copies and the test databases, closed after the tests.
const opened: Array<{ close(): Promise<void> } | FakeLlm | ReadmeRun> = [];
afterAll(async () => {
  for (const open of opened.reverse()) await open.close();
});

/** The example's storage as the test reads it afterwards: the copy's PGlite, or the database. */
async function readBack(dir: string, url: string | undefined) {
  if (url) {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    return { db: drizzlePostgres({ client: sql }) as ExecutiveDatabase, close: () => sql.end() };
  }
  const pglite = new PGlite(path.join(dir, '.state', 'pglite'));
  return {
    db: drizzlePglite({ client: pglite }) as ExecutiveDatabase,
    close: () => pglite.close(),
  };
}

/** Runs the README's commands, checks what they print, then a second run that is declined. */
async function runsAsItsReadmeSays(databaseUrl: string | undefined): Promise<void> {
  const fake = await startFakeLlm(namedScripts[readmeFakeScript(example)].script);
  opened.push(fake);
  const env = {
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'fake',
    // A busy machine may take a minute between the decline and the model's retry.
    DENIAL_WINDOW_MS: '3600000',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  // Each command opens the database and loads Cedar: on a busy machine that takes over a minute.
  const readme = await runReadme(example, { env, timeoutMs: 240_000 });
  opened.push(readme);
  for (const { command, run } of readme.steps) {
    expect(run, command.line).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout, command.line).toMatch(promisedOutput(command));
  }
  // Every command the README shows with its output printed that output.
  const shown = readmeTranscripts(readmeText);
  expect(shown.map((s) => s.line)).toEqual(readme.steps.map((s) => s.command.line));
  for (const [i, { line, output }] of shown.entries()) {
    const printed = readme.steps[i]?.run.stdout ?? '';
    expect(printedAsShown(output, printed), `${line}\nprinted:\n${printed}`).toBe(true);
  }
  const node = (...args: string[]) => readme.node(['dist/agent.js', ...args], env);
  expect((await node('work')).stdout).toBe('nothing to resume\n');

  // A second run: the 500 is declined; the model calls it again and is refused unasked.
  expect((await node('start', 'Pay them again')).code).toBe(0);
  const declined = await node('answer', 'decline', 'not', 'this', 'month', '--as', 'bob');
  expect(declined).toMatchObject({ code: 0, stderr: '' });
  const retried = await node('work');
  expect(retried.stdout).toMatch(
    /^denied pay \{"payee":"acme","amount":500,"currency":"EUR"\}: the same call was declined at .*\nasked pay \{"payee":"globex"/,
  );
  // The requester may not answer the 5,000 question; nothing is recorded.
  const byAda = await node('answer', 'approve', '--as', 'ada');
  expect(byAda.code).toBe(1);
  expect(byAda.stderr).toMatch(/ada asked for it, and its requester may not answer it/);
  expect((await node('answer', 'approve', '--as', 'dave')).code).toBe(1);
  expect((await node('answer', 'decline', '--as', 'carol')).stdout).toMatch(/^carol declined/);
  const last = await node('work');
  expect(last.stdout).toContain('- Denied by policy (pay was not run): the same call was declined');

  const { db, close } = await readBack(readme.dir, databaseUrl);
  try {
    const storage = sqlExecutiveStorage(db);
    const runs = await storage.runs().list({ conversationId: 'payments' });
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    // The runs in the order they started, by their first decision.
    const [first, second] = (await Promise.all(runs.map((r) => decisionsOf(db, r.runId)))).sort(
      (a, b) => (a[0]?.decidedAt.getTime() ?? 0) - (b[0]?.decidedAt.getTime() ?? 0),
    );
    const outcomes = (ds: typeof first) => ds?.map((d) => [d.outcome, d.ruleIds.join()]);
    expect(outcomes(first)).toEqual([
      ['allow', 'pay-small'],
      ['ask', 'pay-medium'],
      ['ask', 'pay-over-1000'],
      ['deny', 'payee-list'],
    ]);
    expect(outcomes(second)?.map(([outcome]) => outcome)).toEqual([
      'allow',
      'ask',
      'deny',
      'ask',
      'deny',
      'deny',
    ]);
    expect(new Set([...(first ?? []), ...(second ?? [])].map((d) => d.policyHash)).size).toBe(1);
    // Each asking decision asked one question, and no call was asked twice.
    const questions = await storage.pauses().listForConversation('payments');
    expect(questions).toHaveLength(4);
    const big = questions.find((q) => q.question.includes('5000'));
    expect(big).toMatchObject({
      requester: 'ada',
      requesterMayNotAnswer: true,
      audience: { roles: ['finance'], names: [] },
      quorum: { approvals: 2 },
    });
    const medium = questions.find((q) => q.question.includes('500,'));
    expect(medium?.deadline?.answer.action).toBe('decline');
  } finally {
    await close();
  }
  // Three payments of the first run and the 20 of the second, each once.
  const ledger = readFileSync(path.join(readme.dir, '.state', 'payments.log'), 'utf8');
  expect(
    ledger
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l.slice(l.indexOf(' ') + 1)).amount),
  ).toEqual([20, 500, 5000, 20]);
}

it(
  'runs as its README says on PGlite: allowed, asked of one and of two of finance, refused, replayed',
  () => runsAsItsReadmeSays(undefined),
  PROGRAMS_TEST_TIMEOUT_MS * 12,
);

it.skipIf(!server)(
  'runs as its README says on PostgreSQL',
  async () => {
    const database = await createTestDatabase(server, 'x_payments');
    opened.push({ close: database.drop });
    await runsAsItsReadmeSays(database.url);
  },
  PROGRAMS_TEST_TIMEOUT_MS * 12,
);
