import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../src/storage/index.js';
import { expectTeamReport, modelCalls, workerPauses } from './delegate-flow.js';
import { dataDirs, sharedStorage } from './run-cli.js';
import { expectPaired } from './transcript.js';

// Records as the release of 2026-12-01 persisted them (fixtures/records/generate.mjs): a run
// waiting on its first question, and a delegated run waiting on two worker questions.
const RELEASE = new URL('./fixtures/records/2026-12-01/', import.meta.url);
const TABLES = {
  'paused-states': 'aura.paused_states',
  suspensions: 'x_continuation.suspensions',
  runs: 'x_continuation.runs',
  checkpoints: 'x_session.checkpoints',
} as const;
type Rows = Record<keyof typeof TABLES, Array<Record<string, unknown>>>;

const dataDir = dataDirs();
// A test's commands share one open storage: PGlite opens once per test, not per command.
const shared = sharedStorage();

// Columns renamed since the release, as their migration moved them (the release's runs wait
// without a due time, so none of them needs a row of x_continuation.run_queue).
const RENAMED: Partial<Record<keyof typeof TABLES, Record<string, string>>> = {
  runs: { due_at: 'claimable_at' },
};

function renamedColumns(file: string, record: Record<string, unknown>) {
  const renames = RENAMED[file as keyof typeof TABLES] ?? {};
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [renames[k] ?? k, v]));
}

/**
 * A data folder of today's code (migrated) holding the release's records, changed first by
 * `edit`; returns the CLI over it.
 */
async function withRecords(edit: (rows: Rows) => void = () => {}) {
  const rows = Object.fromEntries(
    Object.keys(TABLES).map((file) => [
      file,
      JSON.parse(readFileSync(new URL(`${file}.json`, RELEASE), 'utf8')),
    ]),
  ) as Rows;
  edit(rows);
  const data = dataDir();
  const storage = await openStorage({ dataDir: data, command: 'test', log: () => {} });
  try {
    for (const [file, table] of Object.entries(TABLES)) {
      const records = (rows[file as keyof Rows] as Record<string, unknown>[]).map((record) =>
        renamedColumns(file, record),
      );
      // Only the release's own columns: a column added since gets its migration's default.
      const columns = sql.raw(
        Object.keys(records[0] ?? {})
          .map((c) => `"${c}"`)
          .join(', '),
      );
      await storage.db.execute(
        sql`insert into ${sql.raw(table)} (${columns}) select ${columns} from json_populate_recordset(null::${sql.raw(table)}, ${JSON.stringify(records)}::json)`,
      );
    }
  } finally {
    await storage.close();
  }
  return (args: string[]) => shared.run([...args, '--data', data]);
}

const TRIP = 'fixture-trip';
const TEAM = 'fixture-team';
const record = (rows: Rows, conversation: string) =>
  rows.suspensions.find((r) => String(r.record).includes(`"session_id":"${conversation}"`))!;

describe("a release's persisted records, resumed by today's code", { timeout: 300_000 }, () => {
  it('a run waiting on a question (its pause, continuation and run) resumes through every question and completes', async () => {
    const cli = await withRecords();
    const [pause] = (await workerPauses(cli, TRIP)).values();
    let token = pause?.token;
    let step: Record<string, unknown> = {};
    for (const answer of [
      ['--option', '1'],
      ['--accept', '3'],
      ['--accept', 'ok'],
    ]) {
      const answered = await cli(['answer', String(token), ...answer]);
      expect(answered.code, answered.stderr).toBe(0);
      const woke = await cli(['wake', '--once', '--json']);
      expect(woke.code, woke.stderr).toBe(0);
      step = woke.events[woke.events.length - 1] ?? {};
      token = step.token as string;
    }
    expect(step.type).toBe('run-completed');
    expectPaired(step.messages);
  });

  it('a delegated run waiting on worker questions (their checkpoints) resumes each worker and the parent once', async () => {
    const cli = await withRecords();
    const pauses = await workerPauses(cli, TEAM);
    expect([...pauses.keys()].sort()).toEqual(['w1', 'w2']);
    await cli(['answer', pauses.get('w1')?.token ?? '', '--option', '2']);
    await cli(['answer', pauses.get('w2')?.token ?? '', '--accept', 'evening']);
    const woke = await cli(['wake', '--once', '--json']);
    expect(woke.code, woke.stderr).toBe(0);
    expect(modelCalls(woke)).toBe(3);
    expectTeamReport(woke, { w1: '100 to 200 EUR', w2: 'evening' });
  });

  it('a run waiting on a tool this runner does not offer fails saying so, and is never resumed', async () => {
    const cli = await withRecords((rows) => {
      const trip = record(rows, TRIP);
      trip.record = String(trip.record)
        .replaceAll('"name":"ask_user"', '"name":"choose_date"')
        .replace('"tool_name":"ask_user"', '"tool_name":"choose_date"');
    });
    const [pause] = (await workerPauses(cli, TRIP)).values();
    await cli(['answer', pause?.token ?? '', '--accept', 'Lisbon']);
    const woke = await cli(['wake', '--once', '--json']);
    expect(modelCalls(woke)).toBe(0);
    const failed = woke.events.find((e) => e.type === 'run-failed');
    expect(failed?.error).toContain('tool "choose_date" is not offered by this runner');
    // Failed for good: no later pass takes it again.
    const again = await cli(['wake', '--once', '--json']);
    expect(again.events.map((e) => e.type)).toEqual(['idle']);
  });

  it('a continuation and a checkpoint written by a newer version fail their runs saying so, never misread', async () => {
    const cli = await withRecords((rows) => {
      const trip = record(rows, TRIP);
      trip.record = String(trip.record).replace('{"version":1,', '{"version":99,');
      for (const checkpoint of rows.checkpoints) {
        checkpoint.version = 99;
        checkpoint.checkpoint = String(checkpoint.checkpoint).replace(
          '{"version":1,',
          '{"version":99,',
        );
      }
    });
    const trip = [...(await workerPauses(cli, TRIP)).values()];
    const team = [...(await workerPauses(cli, TEAM)).values()];
    for (const pause of [...trip, ...team]) {
      await cli(['answer', pause.token, '--accept', 'yes']);
    }
    const woke = await cli(['wake', '--once', '--json']);
    expect(modelCalls(woke)).toBe(0);
    const failures = new Map(
      woke.events
        .filter((e) => e.type === 'run-failed')
        .map((e) => [e.conversationId, String(e.error)]),
    );
    expect(failures.get(TRIP)).toContain('written by a newer version');
    expect(failures.get(TRIP)).toContain('version 99');
    expect(failures.get(TEAM)).toContain('written by a newer version');
    expect(failures.get(TEAM)).toContain('checkpoint version 99');
  });
});
