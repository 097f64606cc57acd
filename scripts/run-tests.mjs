#!/usr/bin/env node
// The test step of `pnpm verify`: the quick reliability suite and the vitest run side by
// side. Most of the reliability suite waits (on leases, restarts, model delays) while the
// vitest workers keep both cores busy, so together they finish a minute sooner than one
// after the other. Reliability lines are prefixed; the exit code fails if either fails.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const PREFIX = 'reliability │ ';

/** Runs `command`, resolving to its exit code (1 when it died of a signal). */
function run(command, args, { prefixed }) {
  const child = spawn(command, args, {
    stdio: prefixed ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  if (prefixed) {
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      createInterface({ input: from }).on('line', (line) => to.write(`${PREFIX}${line}\n`));
    }
  }
  return new Promise((resolve) => {
    child.on('error', (error) => {
      console.error(`${command}: ${error.message}`);
      resolve(1);
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const [reliability, tests] = await Promise.all([
  run(process.execPath, ['tools/reliability/dist/main.js', '--quick'], { prefixed: true }),
  run(process.execPath, ['node_modules/vitest/vitest.mjs', 'run'], { prefixed: false }),
]);
console.log(
  `verify: reliability (quick) ${reliability === 0 ? 'passed' : `FAILED (exit ${reliability})`}, tests ${tests === 0 ? 'passed' : `FAILED (exit ${tests})`}`,
);
process.exit(reliability === 0 && tests === 0 ? 0 : 1);
