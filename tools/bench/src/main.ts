#!/usr/bin/env node
// `pnpm bench`: every hot path against a floor measured in the same run, one table, JSON.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate as migrateAskUser } from '@x/askuser';
import { migrate as migrateContinuation } from '@x/continuation-postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { benchAskUserBatch, benchAskUserInsert, benchAskUserListing } from './bench-askuser.js';
import { benchFileContinuation, benchPostgresContinuation } from './bench-continuation.js';
import { benchSession, benchWire } from './bench-session-wire.js';
import type { Context, Db, Server } from './context.js';
import { createDatabase, probe, serverUrl } from './db.js';
import { formatTable, judge, type Row } from './report.js';

const USAGE = `usage: pnpm bench [--quick] [--only SECTION[,SECTION]] [--out FILE]

Measures every hot path of the @x/* packages and the runner against a floor measured in
the same run (raw postgres.js statements, raw write+fsync+rename) and prints one table of
ratios with each target met or missed; also writes it as JSON (default
bench-results/latest.json).

  --quick   a smoke run: short budgets and smaller tables (numbers are rough)
  --only    run only these sections: file, pg, askuser, session, wire, runner, telemetry,
            peers, memory, queue, takeover, audit, policy; langgraph-saver runs only the
            rows of peers that compare @x/langgraph's saver with LangGraph's PostgresSaver
  --out     where to write the JSON

PostgreSQL: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else
postgres://postgres@127.0.0.1:5432/postgres. The user must be allowed to CREATE DATABASE:
the run creates x_bench_<random> and drops it at the end.`;

const SECTIONS = [
  'file',
  'pg',
  'askuser',
  'session',
  'wire',
  'runner',
  'telemetry',
  'peers',
  'memory',
  'queue',
  'takeover',
  'audit',
  'langgraph-saver',
  'policy',
] as const;
type Section = (typeof SECTIONS)[number];

/** The sections whose rows need a PostgreSQL server. */
const SERVER_SECTIONS: readonly Section[] = SECTIONS.filter(
  (s) => s !== 'file' && s !== 'session' && s !== 'wire' && s !== 'policy',
);

interface Args {
  quick: boolean;
  only: Set<Section>;
  out: string;
}

const root = path.resolve(fileURLToPath(import.meta.url), '../../../..');

function parseArgs(argv: string[]): Args | undefined {
  const args: Args = {
    quick: false,
    only: new Set(SECTIONS),
    out: path.join(root, 'bench-results', 'latest.json'),
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') continue;
    if (arg === '--quick') args.quick = true;
    else if (arg === '--only') {
      const names = (argv[++i] ?? '').split(',').filter(Boolean);
      const bad = names.filter((n) => !(SECTIONS as readonly string[]).includes(n));
      if (names.length === 0 || bad.length > 0) {
        console.error(`unknown section "${bad.join(',')}": use ${SECTIONS.join(', ')}`);
        return undefined;
      }
      args.only = new Set(names as Section[]);
    } else if (arg === '--out') args.out = path.resolve(argv[++i] ?? '');
    else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else {
      console.error(`unknown argument "${arg}"\n\n${USAGE}`);
      return undefined;
    }
  }
  return args;
}

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
  } catch {
    return undefined;
  }
}

function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (!args) return 2;
  const started = performance.now();
  const tmp = mkdtempSync(path.join(tmpdir(), 'x-bench-'));
  const rows: Row[] = [];
  const ctx: Context = {
    quick: args.quick,
    budget: args.quick
      ? { time: 100, iterations: 5, rounds: 1 }
      : { time: 1000, iterations: 20, rounds: 2 },
    tmp,
    log: (line) => console.log(`  ${line}`),
    add(row) {
      const judged = judge(row);
      rows.push(judged);
      const r = judged.ratio;
      console.log(
        `  ${{ met: '✓', missed: '✗', info: '·', skipped: '-' }[judged.status ?? 'info']} ${judged.section}: ${judged.name}: ${
          r === undefined ? '-' : r.toPrecision(3)
        } (${judged.ratioMeaning}; target ${judged.goal.label}) ${judged.status}`,
      );
    },
  };
  const skip = (section: string, name: string, why: string) =>
    rows.push({
      section,
      name,
      goal: { kind: 'info', label: '-' },
      ratioMeaning: '',
      status: 'skipped',
      note: why,
    });
  const load = loadavg()[0]?.toFixed(1);
  console.log(
    `pnpm bench${args.quick ? ' --quick' : ''}: node ${process.version}, ${cpus().length} cores, load ${load}`,
  );
  if (Number(load) > cpus().length) {
    console.log(
      `  note: the machine is loaded (load ${load} on ${cpus().length} cores): ratios hold up better than times, but both are noisier`,
    );
  }
  const on = (s: Section) => args.only.has(s);
  const url = serverUrl();
  let serverProblem: string | undefined;
  let postgresVersion: string | undefined;
  try {
    if (on('file')) await benchFileContinuation(ctx);
    if (on('session')) await benchSession(ctx);
    if (on('wire')) await benchWire(ctx);
    if (on('policy')) await (await import('./bench-policy.js')).benchPolicyDecision(ctx);
    if (on('policy')) await (await import('./bench-policy-exec.js')).benchPolicyExec(ctx);
    const needsServer = SERVER_SECTIONS.some(on);
    if (needsServer) serverProblem = await probe(url);
    if (needsServer && serverProblem !== undefined) {
      console.error(`
pnpm bench needs a PostgreSQL server for the Postgres, askuser and runner rows, and none
answers at ${withoutPassword(url)} (${serverProblem}).
Start one (e.g. \`docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16\`)
or point BENCH_DATABASE_URL at one whose user may CREATE DATABASE; those rows are skipped.`);
      for (const s of SERVER_SECTIONS) {
        if (on(s)) skip(s, 'all rows', `no PostgreSQL server at ${withoutPassword(url)}`);
      }
    } else if (needsServer) {
      const database = await createDatabase(url);
      // Two clients: drizzle installs its own type parsers and serializers on the client it
      // wraps, and the floors must run on a plain postgres.js client.
      const sql = postgres(database.url, { max: 4, onnotice: () => {} });
      const drizzleClient = postgres(database.url, { max: 4, onnotice: () => {} });
      const onSignal = () => {
        void Promise.all([sql.end({ timeout: 1 }), drizzleClient.end({ timeout: 1 })])
          .then(() => database.drop())
          .finally(() => process.exit(130));
      };
      process.once('SIGINT', onSignal);
      try {
        const [version] = await sql`select current_setting('server_version') as v`;
        postgresVersion = String(version?.v);
        console.log(
          `  PostgreSQL ${postgresVersion}, database ${database.name} (dropped at the end)`,
        );
        const db = drizzle({ client: drizzleClient }) as unknown as Db;
        await migrateContinuation(db);
        await migrateAskUser(db);
        const server: Server = { url: database.url, sql, db };
        if (on('pg')) await benchPostgresContinuation(ctx, server);
        if (on('askuser')) {
          await benchAskUserInsert(ctx, server);
          await benchAskUserBatch(ctx, server);
          await benchAskUserListing(ctx, server);
        }
        if (on('runner')) {
          const { benchRunner } = await import('./bench-runner.js');
          await benchRunner(ctx, server);
        }
        if (on('telemetry')) {
          const { benchTelemetry } = await import('./bench-runner.js');
          await benchTelemetry(ctx, server);
        }
        if (on('peers')) {
          const peers = await import('./bench-peers.js');
          await peers.benchLangGraph(ctx, server);
          await (await import('./bench-langgraph.js')).benchLangGraphSaver(ctx, server);
          await peers.benchAnswerToResume(ctx, server);
          await peers.benchCliAnswer(ctx, server);
        } else if (on('langgraph-saver')) {
          await (await import('./bench-langgraph.js')).benchLangGraphSaver(ctx, server);
        }
        if (on('memory')) {
          const { benchMemory } = await import('./bench-memory.js');
          await benchMemory(ctx, server);
        }
        if (on('queue')) {
          const queue = await import('./bench-queue.js');
          await queue.benchClaim(ctx, server);
          await queue.benchWakeThroughput(ctx, server);
          await queue.benchApiDuringResume(ctx);
        }
        if (on('audit')) {
          const audit = await import('./bench-audit.js');
          const auditRunner = await import('./bench-audit-runner.js');
          await auditRunner.benchRunnerAnswer(ctx, server);
          await auditRunner.benchRunnerAnswerWire(ctx, server);
          await audit.benchAuditedAnswer(ctx, server);
          await auditRunner.benchConcurrentRunnerAnswers(ctx, server);
          await audit.benchConcurrentAnswers(ctx, server);
          await audit.benchPendingForOperator(ctx, server);
          await audit.benchAuditVerify(ctx, server);
          const humanTime = await import('./bench-human-time.js');
          await humanTime.benchQuorumAnswer(ctx, server);
          await humanTime.benchDeadlines(ctx, server);
        }
        if (on('takeover')) {
          const takeover = await import('./bench-takeover.js');
          await takeover.benchTakeoverPostgres(ctx, server);
          await takeover.benchTakeoverEmbedded(ctx);
        }
      } finally {
        process.off('SIGINT', onSignal);
        await Promise.all([sql.end({ timeout: 5 }), drizzleClient.end({ timeout: 5 })]);
        await database.drop();
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`\n${formatTable(rows)}\n`);
  for (const row of rows.filter((r) => r.note)) {
    console.log(`${row.section}: ${row.name}: ${row.note}`);
  }
  const missed = rows.filter((r) => r.status === 'missed').length;
  const met = rows.filter((r) => r.status === 'met').length;
  console.log(
    `\n${met} met, ${missed} missed, ${rows.filter((r) => r.status === 'skipped').length} skipped in ${seconds.toFixed(0)} s`,
  );
  mkdirSync(path.dirname(args.out), { recursive: true });
  writeFileSync(
    args.out,
    `${JSON.stringify(
      {
        when: new Date().toISOString(),
        commit: gitCommit(),
        quick: args.quick,
        node: process.version,
        cores: cpus().length,
        loadAverage: loadavg(),
        postgres: postgresVersion,
        seconds,
        rows,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`wrote ${path.relative(process.cwd(), args.out) || args.out}`);
  return serverProblem === undefined ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
