import { existsSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import SlowestFirst from './scripts/slowest-first.ts';

// Every workspace is a project of one root run, so `pnpm test` prints one summary.
const workspaces = ['packages', 'apps', 'tools', 'examples'].flatMap((group) =>
  readdirSync(group)
    .map((name) => `${group}/${name}`)
    .filter((dir) => statSync(dir).isDirectory()),
);

// A project is named by its folder; an example named as a package (langgraph) by its package name.
function projectName(root: string): string {
  const [group, name = root] = root.split('/');
  const taken = workspaces.some((w) => w !== root && w.endsWith(`/${name}`));
  return group === 'examples' && taken ? `example-${name}` : name;
}

const rootSetup = fileURLToPath(new URL('./scripts/test-setup.ts', import.meta.url));

export default defineConfig({
  test: {
    projects: workspaces.map((root) => ({
      extends: true,
      test: {
        name: projectName(root),
        root,
        include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
        // A workspace's own once-per-run set-up, beside the root's.
        ...(existsSync(`${root}/test/global-setup.ts`)
          ? { globalSetup: [rootSetup, `./test/global-setup.ts`] }
          : {}),
      },
    })),
    globalSetup: [rootSetup],
    reporters: ['default', './scripts/summary-reporter.ts'],
    sequence: { sequencer: SlowestFirst },
    // Most files wait on child processes (the CLI, forked writers): one more worker than the
    // default keeps both cores busy on a 2-core machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
