#!/usr/bin/env node
// The test step of `pnpm verify`: the vitest run, the quick reliability suite and the
// repository checks that need the build (packages, API docs, READMEs) side by side. Most of
// the reliability suite and of the README check waits (on leases, restarts, model delays,
// npm) while the vitest workers keep both cores busy, so together they finish minutes sooner
// than one after the other. The other lanes' lines are prefixed; the exit code fails if any
// lane fails.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const children = new Set();
// A verify that is stopped stops its lanes too, instead of leaving them running unseen.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(1);
  });
}

/** Runs `command`, resolving to its exit code (1 when it died of a signal). */
function run(command, args, { prefix }) {
  const child = spawn(command, args, {
    stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
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

// One after the other in their lane (each is a few seconds to a minute): a failing one does
// not stop the next, so one run reports every stale file.
const CHECKS = [
  ['tools/repo-checks/src/check-packages.mjs'],
  ['tools/api-docs/src/api-docs.mjs', '--check'],
  ['tools/repo-checks/src/check-readmes.mjs'],
];

/** Runs the checks in turn; resolves to the first failing exit code, 0 when all passed. */
async function checks() {
  let failed = 0;
  for (const args of CHECKS) {
    const prefix = 'checks      │ ';
    process.stdout.write(`${prefix}$ node ${args.join(' ')}\n`);
    const code = await run(process.execPath, args, { prefix });
    if (code !== 0 && failed === 0) failed = code;
  }
  return failed;
}

const outcome = (code) => (code === 0 ? 'passed' : `FAILED (exit ${code})`);
const [reliability, checked, tests] = await Promise.all([
  run(process.execPath, ['tools/reliability/dist/main.js', '--quick'], {
    prefix: 'reliability │ ',
  }),
  checks(),
  run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run'], { prefix: undefined }),
]);
console.log(
  `verify: reliability (quick) ${outcome(reliability)}, checks ${outcome(checked)}, tests ${outcome(tests)}`,
);
process.exit(reliability === 0 && checked === 0 && tests === 0 ? 0 : 1);
