import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest on a 2-core machine (seconds), for a clean clone, which has no
 * durations of an earlier run to sort by: measured with the runner project alone on a machine
 * shared with other runs (load about 14), so their order counts, not their size. A file whose
 * commands moved into the tests' process (runInProcess) is scaled by its CPU time after/before.
 */
const KNOWN_SLOW: Record<string, number> = {
  'runner/test/embedded.test.ts': 162,
  'runner/test/deadline.test.ts': 130,
  'runner/test/operator-cli.test.ts': 111,
  'runner/test/wording.test.ts': 110,
  'runner/test/operators.pg.test.ts': 85,
  'runner/test/answer-limits.test.ts': 82,
  'runner/test/audit.test.ts': 80,
  'runner/test/records.test.ts': 69,
  'runner/test/delegate.test.ts': 64,
  'runner/test/deadline.pg.test.ts': 60,
  'runner/test/serve.test.ts': 58,
  'runner/test/via-serve.test.ts': 56,
  'runner/test/providers.cli.test.ts': 53,
  'runner/test/audit.pg.test.ts': 43,
  'runner/test/kept-questions.test.ts': 31,
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
