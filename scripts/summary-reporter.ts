import type { Reporter, TestModule } from 'vitest/node';
import { serverSuitesSkipped } from '../tools/pg-test/src/probe.ts';

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, and says
 * plainly when the PostgreSQL server suites could not run and how to enable them.
 */
export default class SummaryReporter implements Reporter {
  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    if (await serverSuitesSkipped()) {
      console.log(
        '\nNote: no PostgreSQL server was reachable, so the server suites were skipped and the SQL suites ran on PGlite only.\n' +
          'To run them, start PostgreSQL on 127.0.0.1:5432 (trust auth, user postgres) or set TEST_DATABASE_URL=postgres://user@host:port/db.',
      );
    }
    console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
