#!/usr/bin/env node
// The test step of `pnpm verify` (the default) and of `pnpm test:full` (`--full`, which CI runs
// after verify). verify: the vitest run without the slow scenario files (`*.slow.test.ts`)
// beside the package and API-docs checks. --full: the slow scenario files beside the README
// check (both wait more than they compute), then the reliability suite at full size on its own,
// since its kills and leases are timed. The other lanes' lines are prefixed; the exit code
// fails if any lane fails. The tests' summary (scripts/summary-reporter.ts) counts the
// skipped tests by file and says why each was skipped.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { createInterface } from 'node:readline';

const children = new Set();
// A verify that is stopped stops its lanes too, instead of leaving them running unseen.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(1);
  });
}

/**
 * Runs `command`, resolving to its exit code (1 when it died of a signal); with `nice`, at a
 * lower priority, so that it takes the cores the tests leave idle rather than theirs.
 */
function run(command, args, { prefix, nice = 0 }) {
  const child = spawn(command, args, {
    stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  // The lane's own children (npm, tsc, the README programs) inherit it.
  if (nice && child.pid !== undefined) setPriority(child.pid, nice);
  children.add(child);
  child.on('exit', () => children.delete(child));
  if (prefix) {
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      createInterface({ input: from }).on('line', (line) => to.write(`${prefix}${line}\n`));
    }
  }
  return new Promise((resolve) => {
    child.on('error', (error) => {
      console.error(`${prefix ?? ''}${command}: ${error.message}`);
      resolve(1);
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const full = process.argv.includes('--full');
// The slow scenario files: excluded by glob, chosen by vitest's file-name filter.
const SLOW = '.slow.test.ts';

// One after the other in their lane: a failing one does not stop the next, so one run
// reports every stale file.
const CHECKS = full
  ? [['tools/repo-checks/src/check-readmes.mjs']]
  : [
      ['tools/repo-checks/src/check-packages.mjs'],
      ['tools/api-docs/src/api-docs.mjs', '--check'],
      ['tools/repo-checks/src/check-readmes.mjs', '--static'],
    ];

// The checks have slack beside the tests and no lease or deadline to miss: behind the tests,
// they do not lengthen the longest lane.
const CHECKS_NICE = 10;

/** Runs the checks in turn; resolves to the first failing exit code, 0 when all passed. */
async function checks() {
  let failed = 0;
  for (const args of CHECKS) {
    const prefix = 'checks      │ ';
    process.stdout.write(`${prefix}$ node ${args.join(' ')}\n`);
    const code = await run(process.execPath, args, { prefix, nice: CHECKS_NICE });
    if (code !== 0 && failed === 0) failed = code;
  }
  return failed;
}

const started = Date.now();
/** A lane's exit code, and when it ended (minutes and seconds after the start). */
const timed = async (lane) => {
  const code = await lane;
  const s = Math.round((Date.now() - started) / 1000);
  return { code, took: `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` };
};
const outcome = ({ code, took }) => `${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${took}`;
const vitest = [
  'node_modules/vitest/vitest.mjs',
  'run',
  ...(full ? [SLOW] : ['--exclude', `**/*${SLOW}`]),
];
const [checked, tests] = await Promise.all([
  timed(checks()),
  timed(run(process.execPath, vitest, { prefix: undefined })),
]);
// Each lane's time says which one to shorten: the lanes should end together.
const lanes = [
  ['checks', checked],
  [full ? 'slow tests' : 'tests', tests],
];
if (full) {
  const reliability = await timed(
    run(process.execPath, ['tools/reliability/dist/main.js'], { prefix: 'reliability │ ' }),
  );
  lanes.push(['reliability (full)', reliability]);
}
console.log(
  `${full ? 'test:full' : 'verify'}: ${lanes.map(([name, lane]) => `${name} ${outcome(lane)}`).join(', ')}`,
);
process.exit(lanes.every(([, lane]) => lane.code === 0) ? 0 : 1);
