#!/usr/bin/env node
// `pnpm test:reliability`: runs every scenario, prints the summary table, and exits non-zero
// on any loss, duplicate or failure. `--only NAME[,NAME]` runs the scenarios whose name
// starts with one of the NAMEs; `--quick` runs a smaller version, for a quick look.
import { parseArgs } from 'node:util';
import { knob, quick } from './knobs.js';
import { killAll } from './proc.js';
import { render, Tally } from './report.js';
import { scenarios } from './scenarios/index.js';
import { probe, serverUrl, takeQueueChecks } from './server.js';

const { values } = parseArgs({
  options: { only: { type: 'string' }, quick: { type: 'boolean' } },
});
const only = values.only?.split(',').filter(Boolean);
const chosen = scenarios.filter((s) => !only || only.some((o) => s.name.startsWith(o)));

const unreachable = chosen.some((s) => s.server) ? await probe() : undefined;
if (unreachable !== undefined) {
  const where = serverUrl().replace(/\/\/[^@]*@/, '//');
  if (process.env.CI === 'true') {
    console.error(
      `reliability: CI=true but no PostgreSQL server answers at ${where}: ${unreachable}`,
    );
  } else {
    console.error(
      `reliability: no PostgreSQL server at ${where} (${unreachable}); the server scenarios are skipped. ` +
        'Start PostgreSQL on 127.0.0.1:5432 or set TEST_DATABASE_URL.',
    );
  }
}

console.log(
  quick
    ? 'reliability: the quick run; `pnpm test:reliability` runs it at full size'
    : 'reliability: the full run',
);
// A scenario that hangs (a promise that never settles) fails with what it reached instead
// of holding the suite until CI's own limit; the longest ones take about a minute.
const SCENARIO_DEADLINE_S = knob('RELIABILITY_SCENARIO_DEADLINE_S', 600, 300);
const tallies: Tally[] = [];
let hung = false;
// An exception nobody catches (e.g. inside a database driver after a fault) fails the scenario
// that was running instead of ending the suite without its table.
process.on('uncaughtException', (error) => {
  const current = tallies[tallies.length - 1];
  const line = `uncaught exception in the suite process: ${error.stack ?? error}`;
  if (current) current.fail(line);
  else console.error(line);
});
for (const scenario of chosen) {
  const tally = new Tally(scenario.name);
  tallies.push(tally);
  const started = performance.now();
  if (scenario.server && unreachable !== undefined) {
    if (process.env.CI === 'true') tally.fail(`no PostgreSQL server: ${unreachable}`);
    else tally.skip(`no PostgreSQL server (${unreachable})`);
  } else {
    console.log(`▸ ${scenario.name}`);
    // A line every 10 s, so a long scenario never looks hung.
    const progress = setInterval(() => {
      const seconds = ((performance.now() - started) / 1000).toFixed(0);
      console.log(`  … ${seconds} s: ${tally.cases} cases, ${tally.faults} faults so far`);
    }, 10_000);
    let deadline: NodeJS.Timeout | undefined;
    const overdue = new Promise<'overdue'>((resolve) => {
      deadline = setTimeout(() => resolve('overdue'), SCENARIO_DEADLINE_S * 1000);
    });
    try {
      if ((await Promise.race([scenario.run(tally), overdue])) === 'overdue') {
        hung = true;
        tally.fail(
          `hung: not finished after ${SCENARIO_DEADLINE_S} s (${tally.cases} cases, ${tally.faults} faults done); a promise never settled`,
        );
      }
    } catch (error) {
      tally.fail(`scenario crashed: ${(error as Error)?.stack ?? String(error)}`);
    } finally {
      clearTimeout(deadline);
      clearInterval(progress);
      killAll();
    }
    const queue = takeQueueChecks();
    for (const drift of queue.drifted) tally.fail(drift);
    if (queue.databases > 0) {
      tally.note(`run queue invariant checked in ${queue.databases} database(s) before their drop`);
    }
    tally.seconds = (performance.now() - started) / 1000;
    console.log(
      tally.skipped !== undefined
        ? `  skipped: ${tally.skipped}`
        : `  ${tally.passed ? 'ok' : 'FAILED'} (${tally.seconds.toFixed(1)} s)`,
    );
  }
}
console.log(render(tallies));
process.exitCode = tallies.every((t) => t.passed || t.skipped !== undefined) ? 0 : 1;
// A hung scenario still holds its connections and timers: end here rather than wait on them.
if (hung) process.exit();
