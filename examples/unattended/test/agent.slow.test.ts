import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import {
  type FakeLlm,
  PROGRAMS_TEST_TIMEOUT_MS,
  promisedOutput,
  type ReadmeRun,
  runReadme,
  startFakeLlm,
  tripPlanner,
} from '@internal/fake-llm';
import { sqlExecutiveStorage } from '@x/executive';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, expect, it } from 'vitest';

const example = fileURLToPath(new URL('..', import.meta.url));
// The model server and the README's copy, closed after the test.
const opened: Array<FakeLlm | ReadmeRun> = [];
afterAll(async () => {
  for (const open of opened.reverse()) await open.close();
});

/** A model server that never answers: a worker calling it is held mid-resume. */
async function hangingModel(): Promise<{ url: string; called: Promise<void>; server: Server }> {
  let heard: () => void = () => {};
  const called = new Promise<void>((resolve) => {
    heard = resolve;
  });
  const server = createServer(() => heard());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, called, server };
}

it(
  'starts, answers and completes a run in three processes; a worker killed mid-resume leaves it to the next, which completes it once',
  async () => {
    const fake = await startFakeLlm(tripPlanner);
    opened.push(fake);
    const readme = await runReadme(example, {
      env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'fake' },
    });
    opened.push(readme);
    for (const { command, run } of readme.steps) {
      expect(run, command.line).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout, command.line).toMatch(promisedOutput(command));
    }
    const [, , work] = readme.steps.map((step) => step.run);
    expect(work?.stdout).toBe('Your trip to Lisbon: sunny in Lisbon.\n');

    // A second run, answered; its worker is killed while its model call is in flight.
    expect((await readme.node(['dist/agent.js', 'start', 'Plan me a trip'])).code).toBe(0);
    expect((await readme.node(['dist/agent.js', 'answer', 'Porto'])).code).toBe(0);
    const hanging = await hangingModel();
    let killed: ChildProcess | undefined;
    try {
      killed = spawn(process.execPath, ['dist/agent.js', 'work'], {
        cwd: readme.dir,
        env: {
          ...process.env,
          ANTHROPIC_BASE_URL: hanging.url,
          ANTHROPIC_API_KEY: 'fake',
          LEASE_MS: '1000',
        },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => killed?.once('exit', resolve));
      await hanging.called;
      killed.kill('SIGKILL');
      await exited;
    } finally {
      hanging.server.closeAllConnections();
      hanging.server.close();
    }

    // The next worker takes the run over once the dead one's lease ran out.
    let next = await readme.node(['dist/agent.js', 'work']);
    for (let tries = 0; next.stdout === 'nothing to resume\n' && tries < 10; tries++) {
      next = await readme.node(['dist/agent.js', 'work']);
    }
    expect(next).toMatchObject({ code: 0, stderr: '' });
    expect(next.stdout).toBe('Your trip to Porto: sunny in Porto.\n');
    const after = await readme.node(['dist/agent.js', 'work']);
    expect(after.stdout).toBe('nothing to resume\n');

    // Both runs completed, each once: the second after one lost attempt, one final answer.
    const pglite = new PGlite(path.join(readme.dir, '.state', 'pglite'));
    try {
      const storage = sqlExecutiveStorage(drizzle({ client: pglite }));
      const runs = await storage.runs().list({ conversationId: 'trip' });
      expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
      const second = runs.find((r) => r.lostAttempts > 0);
      expect(second).toMatchObject({ attempts: 2, lostAttempts: 1 });
      const transcript = (await storage.runs().transcript(second?.runId ?? '')) ?? [];
      const answers = transcript.filter((m) => m.role === 'assistant').at(-1);
      expect(answers?.content).toEqual([
        { type: 'text', text: 'Your trip to Porto: sunny in Porto.' },
      ]);
      expect(transcript.filter((m) => m.role === 'user')).toHaveLength(3);
    } finally {
      await pglite.close();
    }
  },
  PROGRAMS_TEST_TIMEOUT_MS * 2,
);
