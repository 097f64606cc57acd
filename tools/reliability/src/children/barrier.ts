// Loaded with `node --import` before the runner's CLI: loads the CLI's modules, says it is
// ready (a file `ready-<pid>` in RELIABILITY_BARRIER), and waits there until the file `go`
// appears, so that every process starts its command at the same moment.
import { existsSync, readdirSync, watch, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.env.RELIABILITY_BARRIER;
if (dir) {
  // The CLI's own imports, evaluated now, so that after the barrier only the command runs.
  const dist = dirname(createRequire(import.meta.url).resolve('runner/dist/cli.js'));
  const modules = [
    ...['errors.js', 'terminal/invocation.js', 'terminal/output.js', 'storage/index.js'],
    ...readdirSync(join(dist, 'commands'))
      .filter((name) => name.endsWith('.js'))
      .map((name) => `commands/${name}`),
  ];
  for (const module of modules) await import(pathToFileURL(join(dist, module)).href);
  const go = join(dir, 'go');
  await new Promise<void>((resolve) => {
    const watcher = watch(dir, () => {
      if (existsSync(go)) {
        watcher.close();
        resolve();
      }
    });
    writeFileSync(join(dir, `ready-${process.pid}`), '');
    if (existsSync(go)) {
      watcher.close();
      resolve();
    }
  });
}
