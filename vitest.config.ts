import { readdirSync, statSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Every workspace is a project of one root run, so `pnpm test` prints one summary.
const workspaces = ['packages', 'apps', 'tools'].flatMap((group) =>
  readdirSync(group)
    .map((name) => `${group}/${name}`)
    .filter((dir) => statSync(dir).isDirectory()),
);

export default defineConfig({
  test: {
    projects: workspaces.map((root) => ({
      extends: true,
      test: { name: root.split('/')[1], root, include: ['src/**/*.test.ts', 'test/**/*.test.ts'] },
    })),
    reporters: ['default', './scripts/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
