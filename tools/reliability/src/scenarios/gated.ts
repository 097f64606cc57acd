import type { Sql } from 'postgres';
import { modelFromId } from 'runner/dist/model/index.js';
import { knob } from '../knobs.js';
import { nextEvent, sleep, startRunner } from '../proc.js';
import type { Tally } from '../report.js';
import { runCounts } from '../rows.js';
import { answer, type Storage, startRun, untilAllCompleted } from '../runner.js';
import { withDatabase } from './faults.js';

/** SIGKILLs of a working wake (full 100). */
const KILLS = knob('RELIABILITY_GATED_KILLS', 100, 5);
/** Runs a wake resumes at once; as many conversations are kept unfinished. */
const CONCURRENCY = 4;
/** A slow model and a slow remote API after its effect: kills land inside the work. */
const SLOW = { RUNNER_SCRIPTED_DELAY_MS: '100', RUNNER_DEMO_TOOL_DELAY_MS: '300' };
/** Every kill ends an attempt: no run may give up because of them. */
const ATTEMPTS = { RUNNER_MAX_ATTEMPTS: '100000' };

/**
 * Approves every pending gated call: a transfer of an even conversation with edited arguments
 * (the amount is the conversation's number), everything else as asked. Returns how many.
 */
async function approveAll(storage: Storage, edits: Map<string, number>): Promise<number> {
  const pending = await storage.pauses().listPendingAll(1000);
  for (const pause of pending) {
    const n = Number(pause.conversationId.replace('gated-', ''));
    const gated = (pause.resumeContext as { gated?: { tool: string; arguments: object } } | null)
      ?.gated;
    const edit = gated?.tool === 'transfer_funds' && n % 2 === 0;
    if (edit) edits.set(pause.token, n + 1);
    const content = edit ? JSON.stringify({ ...gated.arguments, amount: n + 1 }) : '';
    await answer(storage, pause.token, { action: 'accept', content });
  }
  return pending.length;
}

/** Starts conversations of scripted:gated until `least` runs are unfinished. */
async function keepBusy(storage: Storage, sql: Sql, started: { n: number }, least: number) {
  const [row] = await sql`select count(*)::int as n from x_continuation.runs
    where status <> 'completed' and conversation_id like 'gated-%'`;
  const model = modelFromId('scripted:gated');
  for (let open = row?.n ?? 0; open < least; open++) {
    const conversation = `gated-${started.n++}`;
    const run = await startRun(storage, model, 'Pay invoice 42', conversation, { event: () => {} });
    if (run.status !== 'waiting') throw new Error(`${conversation}: ${run.status}`);
  }
}

/**
 * Approved gated calls under SIGKILL: `runner wake` is killed at a random moment of its work,
 * 100 times (full run), while conversations of scripted:gated are approved, some with edited
 * arguments; then a wake finishes them. The tool's idempotency key is the question's token:
 * each approval must have exactly one effect (a tool re-invoked after a crash deduplicates by
 * key), with the arguments that were approved, and every run must complete.
 */
export async function gatedKills(tally: Tally): Promise<void> {
  await withDatabase(async (database, sql, storage) => {
    const started = { n: 0 };
    const edits = new Map<string, number>();
    const env = { DATABASE_URL: database.url, ...SLOW, ...ATTEMPTS };
    for (let kill = 0; kill < KILLS; kill++) {
      // Enough work that every kill lands in some: new conversations as others complete.
      await keepBusy(storage, sql, started, CONCURRENCY);
      await approveAll(storage, edits);
      const wake = startRunner(['wake', '--json', '--concurrency', String(CONCURRENCY)], env);
      if (await nextEvent(wake, (e) => e.type === 'run-claimed', 60_000)) {
        await sleep(Math.random() * 600);
      }
      wake.child.kill('SIGKILL');
      tally.faults++;
      await wake.done;
    }
    // Then one wake that is not killed finishes every conversation.
    const finisher = startRunner(['wake', '--json', '--concurrency', '8'], env);
    try {
      await untilAllCompleted(
        tally,
        started.n,
        async () => {
          await approveAll(storage, edits);
          return runCounts(storage.db, 'gated-');
        },
        () => finisher.stderr,
      );
    } finally {
      finisher.child.kill('SIGTERM');
      await finisher.done;
    }
    await check(tally, sql, edits, started.n);
  });
}

async function check(
  tally: Tally,
  sql: Sql,
  edits: Map<string, number>,
  conversations: number,
): Promise<void> {
  const approved = await sql<{ token: string }[]>`select token from aura.paused_states
    where kind = 'approve' and resumed_answer->>'action' = 'accept'`;
  const effects = await sql<
    { key: string; tool: string; amount: number | null; invocations: number }[]
  >`select key, tool, (arguments->>'amount')::float8 as amount, invocations from runner.tool_effects`;
  const results = await sql<{ token: string }[]>`select token from x_executive.gated_results`;
  const byKey = new Map(effects.map((e) => [e.key, e]));
  tally.cases = approved.length;
  for (const { token } of approved) {
    const effect = byKey.get(token);
    if (!effect) {
      tally.loss(`approval ${token} had no effect`);
      continue;
    }
    const amount = edits.get(token);
    if (amount !== undefined) {
      tally.check(
        effect.amount === amount,
        () => `approval ${token} was edited to ${amount}, ${effect.tool} ran with ${effect.amount}`,
      );
    }
  }
  const tokens = new Set(approved.map((a) => a.token));
  for (const effect of effects) {
    if (!tokens.has(effect.key)) tally.duplicate(`effect ${effect.key} belongs to no approval`);
  }
  tally.check(
    results.length === approved.length,
    () => `${results.length} recorded results for ${approved.length} approvals`,
  );
  tally.check(
    approved.length === 2 * conversations,
    () => `${approved.length} approvals, want ${2 * conversations}`,
  );
  const again = effects.filter((e) => e.invocations > 1);
  tally.note(
    `${conversations} conversations, ${approved.length} approvals, ${effects.length} effects, one each; ${again.length} calls were invoked again after a kill (at-least-once, deduplicated by key), ${edits.size} with edited arguments`,
  );
}
