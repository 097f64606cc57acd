import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';
import { dataDirs, type Served, serve } from './serve-harness.js';

const dataDir = dataDirs();

// An exec sent to serve runs in serve's process: its questions would be asked under serve's
// policy variables, so one whose own differ is refused, naming them.
describe('exec through serve: the question policy is the one both share, or nothing runs', () => {
  const data = dataDir();
  const deadline = { RUNNER_DEADLINE: 'ask_user=1h:cancel' };
  let server: Served;
  beforeAll(async () => {
    server = await serve(['--data', data], deadline);
  }, 120_000);
  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
  });

  const exec = (conversation: string, env: Record<string, string>) =>
    runCli(['exec', 'Plan a trip', '--conversation', conversation, '--data', data, '--json'], {
      env: { RUNNER_TOKEN: '', ...env },
    });
  const conversations = async () =>
    (await runCli(['runs', '--data', data, '--json'])).events.map((e) => e.conversationId);

  it('refuses an exec with an audience and a requester rule serve has not, and starts nothing', async () => {
    const refused = await exec('barred', {
      ...deadline,
      RUNNER_AUDIENCE: 'approve=finance',
      RUNNER_REQUESTER_MAY_NOT_APPROVE: 'approve',
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `RUNNER_AUDIENCE, RUNNER_REQUESTER_MAY_NOT_APPROVE: not the same here as in serve (pid ${server.child.pid})`,
    );
    expect(await conversations()).not.toContain('barred');
  }, 60_000);

  it("refuses one without serve's deadline, and runs one with it", async () => {
    const refused = await exec('no-deadline', {});
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('RUNNER_DEADLINE: not the same here as in serve');
    const ran = await exec('same-deadline', deadline);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.events.find((e) => e.type === 'run-waiting')).toBeDefined();
    const runs = await conversations();
    expect(runs).toContain('same-deadline');
    expect(runs).not.toContain('no-deadline');
  }, 60_000);
});
