import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (seconds of wall time), for a clean clone, which has no
 * durations of an earlier run to sort by: measured on 2 cores, otherwise idle, in one run of
 * every file; the slow scenario files (`*.slow.test.ts`, run by `pnpm test:full`) apart.
 */
const KNOWN_SLOW: Record<string, number> = {
  'runner/test/deadline.slow.test.ts': 61,
  'runner/test/deadline.pg.slow.test.ts': 24,
  'runner/test/answer-limits.slow.test.ts': 16,
  'runner/test/traces.slow.test.ts': 16,
  'runner/test/operators.pg.test.ts': 19,
  'runner/test/delegate.pg.test.ts': 16,
  'runner/test/operator-cli.test.ts': 14,
  'runner/test/embedded.test.ts': 13,
  'runner/test/sessions.pg.test.ts': 12,
  'runner/test/postgres.pg.test.ts': 11,
  'runner/test/wording.test.ts': 10,
  'runner/test/serve.test.ts': 10,
  'runner/test/notifications.test.ts': 9,
  'runner/test/quorum.test.ts': 7,
  'runner/test/audit.test.ts': 6,
  'session-postgres/src/store.pg.test.ts': 8,
  'continuation-postgres/src/store.test.ts': 8,
  'mcp-elicitation/test/example.test.ts': 7,
  'continuation-postgres/src/worker.test.ts': 6,
};

/**
 * Runs the longest files first, across all projects (vitest's own order runs the projects
 * by name, so the runner's long files came last): a long file that starts last keeps one
 * worker busy while the others are idle. Durations of the last run on this machine win over
 * the list above; files known to neither keep vitest's order after them.
 */
export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const estimate = new Map(ordered.map((spec) => [spec, this.#seconds(spec)]));
    // Array.prototype.sort is stable: equal estimates (unknown files) keep vitest's order.
    return ordered.sort((a, b) => (estimate.get(b) ?? 0) - (estimate.get(a) ?? 0));
  }

  #seconds(spec: TestSpecification): number {
    const file = relative(spec.project.config.root, spec.moduleId).replaceAll('\\', '/');
    const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
    const last = this.ctx.cache.getFileTestResults(key);
    if (last && !last.failed) return last.duration / 1000;
    return KNOWN_SLOW[`${spec.project.name}/${file}`] ?? 0;
  }
}
