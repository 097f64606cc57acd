import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { type CliResult, runCli, runInProcess, sharedStorage } from './run-cli.js';

/** Where one test's runner keeps its state, and a way around the runner into its database. */
export interface AuditTarget {
  /** What every command of the test gets (e.g. `--data DIR`). */
  args: string[];
  env: Record<string, string>;
  /** Runs SQL on the database directly, as someone with its URL (or its files) could. */
  sql(query: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

const last = <T>(list: T[]): T => list[list.length - 1] as T;

/**
 * The audit log through the CLI, against a fresh target per test: what exec and answer
 * record, the seal that moves `audit head`, tampering that `audit verify` names, and purges
 * that keep it passing.
 */
export function describeAuditFlow(
  name: string,
  target: () => Promise<AuditTarget>,
  options: { shareStorage?: boolean } = {},
): void {
  describe(`the audit log (${name})`, { timeout: 300_000 }, () => {
    // With shareStorage, a test's commands share one open storage (PGlite's opening is most of
    // a short command); closed before the test reaches around the runner into its database,
    // and before the target goes. Without it, each command opens its own.
    const shared = sharedStorage();
    const run = options.shareStorage ? shared.run : runInProcess;
    const withTarget = (test: (t: AuditTarget, cli: Cli) => Promise<void>) => async () => {
      const t = await target();
      const around: AuditTarget = {
        ...t,
        sql: async (query) => {
          await shared.close();
          return t.sql(query);
        },
      };
      try {
        await test(around, (args) => run([...args, ...t.args], { env: t.env }));
      } finally {
        await shared.close();
        await t.close();
      }
    };

    it(
      'lists the question exec created and the answer with who gave it and through what; verify passes',
      withTarget(async (t, cli) => {
        const token = await waitingToken(cli, 'a1');
        expect((await cli(['answer', token, '--accept', 'Kyoto'])).code).toBe(0);
        const listed = await cli(['audit', '--conversation', 'a1', '--json']);
        expect(listed.code, listed.stderr).toBe(0);
        const entries = listed.events.filter((e) => e.type === 'audit-entry');
        expect(entries.map((e) => [e.chain, e.seq, e.kind, e.token])).toEqual([
          ['conversation:a1', 1, 'question-created', token],
          ['conversation:a1', 2, 'question-answered', token],
        ]);
        expect(entries[0]?.data).toMatchObject({
          conversationId: 'a1',
          question: 'Where would you like to go?',
          runId: expect.any(String),
          argumentsDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        });
        expect(entries[1]?.data).toMatchObject({
          action: 'accept',
          content: 'Kyoto',
          by: userInfo().username,
          channel: 'cli',
          signedInWith: 'os-user',
        });
        const human = await cli(['audit']);
        expect(human.stdout).toContain(`question-answered  ${token}  accept "Kyoto" by `);
        // The policy's decision to ask is signed too, in the policy chain, naming the question.
        const all = await cli(['audit', '--json']);
        const decisions = all.events.filter(
          (e) => e.type === 'audit-entry' && e.chain === 'policy',
        );
        expect(decisions.map((e) => e.data)).toEqual([
          expect.objectContaining({ event: 'policy-decision', outcome: 'ask', token }),
        ]);
        // As the real binary once: the other commands run in the tests' process.
        await shared.close();
        const verified = await runCli(['audit', 'verify', ...t.args], { env: t.env });
        expect(verified.code, verified.stderr).toBe(0);
        expect(verified.stdout).toContain('verified 3 entries in 2 chains: no tampering found');
      }),
    );

    it(
      'a second answer is refused and recorded; audit head moves with each seal of the wake loop',
      withTarget(async (_t, cli) => {
        const token = await waitingToken(cli, 'a2');
        expect(await head(cli)).toBeNull();
        expect((await cli(['answer', token, '--accept', 'Kyoto'])).code).toBe(0);
        const again = await cli(['answer', token, '--accept', 'Lisbon']);
        expect(again.code).toBe(5);
        const kinds = await kindsOf(cli, 'a2');
        expect(kinds).toEqual(['question-created', 'question-answered', 'answer-refused']);
        const woke = await cli(['wake', '--once', '--json']);
        expect(woke.code, woke.stderr).toBe(0);
        const first = await head(cli);
        expect(first).toMatchObject({ chain: 'global', seq: 1, hash: expect.any(String) });
        const next = last(woke.events).token as string;
        expect((await cli(['answer', next, '--accept', '3'])).code).toBe(0);
        expect((await cli(['wake', '--once'])).code).toBe(0);
        const second = await head(cli);
        expect(second?.seq).toBe(2);
        expect(second?.hash).not.toBe(first?.hash);
        const shown = await cli(['audit', 'head']);
        expect(shown.stdout.trim()).toBe(`${second?.hash}  (global #2)`);
        expect((await cli(['audit', 'verify'])).code).toBe(0);
      }),
    );

    it(
      "finds an UPDATE of an answered row's content, naming its entry",
      withTarget(async (t, cli) => {
        const token = await answered(cli, 'a3');
        await t.sql(
          `update aura.paused_states set resumed_answer = '{"action":"accept","content":"Lisbon"}'::jsonb where token = '${token}'`,
        );
        const failed = await cli(['audit', 'verify']);
        expect(failed.code).toBe(1);
        expect(failed.stdout).toContain('verification FAILED');
        expect(failed.stdout).toContain(`(question ${token})`);
        expect(failed.stderr).toContain('the audit log does not verify: first bad entry');
      }),
    );

    it(
      'finds a DELETE of an entry and an INSERTed one, naming where each is',
      withTarget(async (t, cli) => {
        await answered(cli, 'a4');
        await answered(cli, 'a5');
        await t.sql(`delete from aura.audit_entries where chain = 'conversation:a4' and seq = 1`);
        const [row] = await t.sql(
          `select hash from aura.audit_entries where chain = 'conversation:a5' and seq = 2`,
        );
        await t.sql(`insert into aura.audit_entries (chain, seq, kind, at, token, body, prev, hash, sig)
          values ('conversation:a5', 3, 'question-answered', now(), null, '{"forged":true}',
            '${String(row?.hash)}', '${'ab'.repeat(32)}', '${'cd'.repeat(32)}')`);
        const failed = await cli(['audit', 'verify', '--json']);
        expect(failed.code).toBe(1);
        const [result] = failed.events.filter((e) => e.type === 'audit-verified');
        const problems = (result?.problems ?? []) as Array<{ chain: string; seq: number }>;
        expect(problems.map((p) => [p.chain, p.seq])).toEqual(
          expect.arrayContaining([
            // The first entry gone: the one now first starts the chain without a purge's say.
            ['conversation:a4', 2],
            ['conversation:a5', 3],
          ]),
        );
        expect(result?.ok).toBe(false);
      }),
    );

    it(
      'paused-states purge keeps verify passing, and records the purge',
      withTarget(async (_t, cli) => {
        const token = await waitingToken(cli, 'a6');
        // Finished: the run ends, so its questions may be purged.
        expect((await cli(['stop', 'a6'])).code).toBe(0);
        expect((await cli(['wake', '--once'])).code).toBe(0);
        const purged = await cli(['paused-states', 'purge', '--older-than', '0s', '--json']);
        expect(purged.code, purged.stderr).toBe(0);
        expect(last(purged.events)).toMatchObject({ type: 'purged', deleted: 1 });
        const listed = await cli(['audit', '--json']);
        const purge = listed.events.find((e) => e.kind === 'question-purged');
        expect(purge?.data).toMatchObject({ tokens: [token] });
        const verified = await cli(['audit', 'verify']);
        expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      }),
    );

    it(
      'operators added, revoked and rotated are recorded with their roles and who did it; verify passes',
      withTarget(async (_t, cli) => {
        expect((await cli(['operators', 'add', 'bob', '--role', 'finance'])).code).toBe(0);
        expect((await cli(['operators', 'rotate', 'bob'])).code).toBe(0);
        expect((await cli(['operators', 'revoke', 'bob'])).code).toBe(0);
        // A refused change records nothing.
        expect((await cli(['operators', 'revoke', 'bob'])).code).toBe(3);
        const listed = await cli(['audit', '--json']);
        const events = listed.events.filter((e) => e.kind === 'app-event');
        const by = userInfo().username;
        expect(events.map((e) => [e.chain, e.seq, e.data])).toEqual([
          [
            'operators',
            1,
            {
              event: 'operator-added',
              name: 'bob',
              roles: ['operator', 'finance'],
              by,
              channel: 'cli',
            },
          ],
          [
            'operators',
            2,
            {
              event: 'key-rotated',
              name: 'bob',
              roles: ['operator', 'finance'],
              by,
              channel: 'cli',
            },
          ],
          [
            'operators',
            3,
            {
              event: 'operator-revoked',
              name: 'bob',
              roles: ['operator', 'finance'],
              by,
              channel: 'cli',
            },
          ],
        ]);
        // No key is ever recorded.
        expect(listed.stdout).not.toMatch(/runner_[0-9a-f]{16}_/);
        const human = await cli(['audit']);
        expect(human.stdout).toContain(`operator-added bob (operator, finance) by ${by} via cli`);
        const verified = await cli(['audit', 'verify']);
        expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      }),
    );
  });
}

type Cli = (args: string[]) => Promise<CliResult>;

async function waitingToken(cli: Cli, conversation: string): Promise<string> {
  const run = await cli(['exec', 'Plan me a trip', '--conversation', conversation, '--json']);
  expect(run.code, run.stderr).toBe(0);
  return last(run.events).token as string;
}

async function answered(cli: Cli, conversation: string): Promise<string> {
  const token = await waitingToken(cli, conversation);
  expect((await cli(['answer', token, '--accept', 'Kyoto'])).code).toBe(0);
  return token;
}

async function kindsOf(cli: Cli, conversation: string): Promise<unknown[]> {
  const listed = await cli(['audit', '--conversation', conversation, '--json']);
  return listed.events.filter((e) => e.type === 'audit-entry').map((e) => e.kind);
}

async function head(cli: Cli): Promise<{ chain: string; seq: number; hash: string } | null> {
  const shown = await cli(['audit', 'head', '--json']);
  expect(shown.code, shown.stderr).toBe(0);
  return last(shown.events).head as { chain: string; seq: number; hash: string } | null;
}
