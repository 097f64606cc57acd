import { expect } from 'vitest';
import { finished, runCli, startCli, waitForOutput } from './run-cli.js';

// A question's deadline across a restart of wake, on either storage: the run queue keeps the
// deadline, so a wake stopped before it applies it once when started again after it.

/** Where the runner keeps its state: `--data DIR`, or none with DATABASE_URL in `env`. */
export interface DeadlineWhere {
  args: string[];
  env: Record<string, string>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function pendingDeadline(args: string[], env: Record<string, string>): Promise<Date> {
  const list = await runCli(['paused-states', 'list', ...args, '--json'], { env });
  const deadline = list.events[0]?.deadline as { at: string } | null;
  if (!deadline) throw new Error(`no deadline on the pending question: ${list.stdout}`);
  return new Date(deadline.at);
}

/** `runner exec` of a trip that stops on ask_user; its token. */
async function execOn(conversation: string, where: DeadlineWhere, env: Record<string, string>) {
  const args = ['exec', 'Plan a trip', '--conversation', conversation, '--json', ...where.args];
  const result = await runCli(args, { env });
  const token = result.events.find((e) => e.type === 'run-waiting')?.token;
  expect(result.code, result.stderr).toBe(0);
  return token as string;
}

/**
 * A wake stopped before a 20 s deadline and started after it applies it once; an answer
 * after it, applied or not, is exit 7; show and the audit log say so.
 */
export async function restartAcrossDeadline(where: DeadlineWhere): Promise<void> {
  const env = { ...where.env, RUNNER_DEADLINE: 'ask_user=20s:decline' };
  const token = await execOn('dl-restart', where, env);
  const early = startCli(['wake', ...where.args, '--json'], { env });
  await waitForOutput(early, '"type":"ready"');
  early.kill('SIGTERM');
  const stopped = await finished(early);
  const at = await pendingDeadline(where.args, env);
  // This test needs the first wake to be gone before the deadline (20 s after exec).
  expect(Date.now(), 'the machine was too slow to stop wake before the deadline').toBeLessThan(
    at.getTime(),
  );
  expect(stopped.events.map((e) => e.type)).toEqual(['ready', 'stop-requested']);
  const runs = await runCli(['runs', ...where.args], { env });
  expect(runs.stdout).toMatch(/waiting .* deadline \S+Z \((\d+ s left|passed)\)/);

  await sleep(at.getTime() - Date.now() + 200);
  // Past the deadline, not applied yet: the answer is refused all the same.
  const late = await runCli(['answer', token, '--accept', 'Lisbon', ...where.args], { env });
  expect(late.code, late.stderr).toBe(7);
  expect(late.stderr).toContain('reached its deadline before the answer came');

  const woke = await runCli(['wake', '--once', ...where.args, '--json'], { env });
  expect(woke.code, woke.stderr).toBe(0);
  const claimed = woke.events.filter((e) => e.type === 'run-claimed');
  expect(claimed).toEqual([expect.objectContaining({ token, action: 'expired' })]);
  const again = await runCli(['wake', '--once', ...where.args, '--json'], { env });
  expect(again.events.filter((e) => e.type === 'run-claimed')).toEqual([]);

  const show = await runCli(['show', 'dl-restart', ...where.args], { env });
  expect(show.stdout).toContain(
    `[result: No answer came before the deadline (${at.toISOString()}); the default (decline) was applied.]`,
  );
  expect(show.stdout).toMatch(/→ expired at \S+: its default decline was applied/);
  expect((await runCli(['answer', token, '--decline', ...where.args], { env })).code).toBe(7);

  const audit = await runCli(['audit', ...where.args, '--json'], { env });
  const mine = audit.events.filter((e) => e.token === token);
  expect(mine.filter((e) => e.kind === 'question-expired')).toHaveLength(1);
  expect(mine.filter((e) => e.kind === 'question-answered')).toHaveLength(0);
  const refused = mine.filter((e) => e.kind === 'answer-refused');
  expect(refused.map((e) => (e.data as { reason: string }).reason)).toEqual(['expired', 'expired']);
  const verified = await runCli(['audit', 'verify', ...where.args], { env });
  expect(verified.code, verified.stdout + verified.stderr).toBe(0);
}
