import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheus, sampleValue } from './prometheus.js';
import { run, start, until } from './serve-harness.js';

const server = await serverForTests();

describe.skipIf(!server)('metrics of runner wake on PostgreSQL', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase(server);
    env = { DATABASE_URL: database.url };
  });
  afterAll(() => database?.drop());

  it('wake --metrics-port: a retry, an expiry, the pool and the gauges, as the actions imply', async () => {
    // Both runs resume to their next question (the scripted trip asks again after the
    // expiry's decline).
    const exec = async (conversation: string, extra: Record<string, string> = {}) => {
      const done = await run(['exec', 'Plan a trip', '--conversation', conversation, '--json'], {
        ...env,
        ...extra,
      });
      expect(done.code, done.stderr).toBe(0);
      return done.events.find((e) => e.type === 'run-waiting')?.token as string;
    };
    const answered = await exec('answered');
    // Its question's deadline passes before the wake starts: the wake applies its default.
    await exec('expired', { RUNNER_DEADLINE: 'ask_user=1ms:decline' });
    const answer = await run(['answer', answered, '--accept', 'Lisbon'], env);
    expect(answer.code, answer.stderr).toBe(0);
    // The wake's first model call fails (a simulated 503, not retried within the call): that
    // attempt is retried.
    const wake = start(['wake', '--json', '--metrics-port', '0'], {
      ...env,
      RUNNER_SCRIPTED_FAIL: '1',
      RUNNER_MODEL_RETRIES: '0',
      RUNNER_RETRY_BACKOFF_MS: '1',
    });
    try {
      const url = await until(() => {
        const line = wake
          .stdout()
          .split('\n')
          .find((l) => l.includes('"type":"metrics"'));
        return line && (JSON.parse(line) as { url: string }).url;
      }, 'the metrics listener');
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const samples = await until(async () => {
        const got = parsePrometheus(await (await fetch(url)).text()).samples;
        // The answered run asks its next question; the expired one's default decline ends it.
        const settled =
          sampleValue(got, 'runner_human_wait_seconds_count') === 2 &&
          sampleValue(got, 'runner_runs', { status: 'waiting' }) === 1 &&
          sampleValue(got, 'runner_runs', { status: 'completed' }) === 1;
        return settled && got;
      }, 'both runs to be resumed');
      const at = (name: string, labels?: Record<string, string>) =>
        sampleValue(samples, name, labels);
      expect({
        completed: at('runner_runs_completed_total'),
        failed: at('runner_runs_failed_total'),
        cancelled: at('runner_runs_cancelled_total'),
        expired: at('runner_runs_expired_total'),
        retries: at('runner_run_retries_total'),
        leasesLost: at('runner_leases_lost_total'),
        refused: at('runner_answers_refused_total'),
        pending: at('runner_questions_pending', { kind: 'ask_user', priority: 'normal' }),
        waiting: at('runner_runs', { status: 'waiting' }),
        completedRuns: at('runner_runs', { status: 'completed' }),
        ready: at('runner_runs', { status: 'ready' }),
        leases: at('runner_leases_held'),
        poolMax: at('runner_db_pool_connections_max'),
        humanAccept: at('runner_human_wait_seconds_count', { outcome: 'accept' }),
        humanExpired: at('runner_human_wait_seconds_count', { outcome: 'expired' }),
        // Each attempt that reached its model call: the failed one, its retry, the expiry's.
        resumes: at('runner_answer_to_resume_seconds_count'),
        callsFailed: at('runner_model_call_duration_seconds_count', { outcome: 'error' }),
        callsOk: at('runner_model_call_duration_seconds_count', { outcome: 'ok' }),
      }).toEqual({
        completed: 1,
        failed: 0,
        cancelled: 0,
        expired: 1,
        retries: 1,
        leasesLost: 0,
        refused: 0, // Each reason's counter starts at 0; none was refused.
        pending: 1,
        waiting: 1,
        completedRuns: 1,
        ready: 0,
        leases: 0,
        poolMax: 10,
        humanAccept: 1,
        humanExpired: 1,
        resumes: 3,
        callsFailed: 1,
        callsOk: 2,
      });
      const inUse = at('runner_db_pool_connections_in_use') ?? -1;
      expect(inUse >= 0 && inUse <= 10).toBe(true);
    } finally {
      expect(await wake.stop()).toBe(0);
    }
  });
});
