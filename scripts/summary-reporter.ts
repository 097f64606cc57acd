import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';
import { serverSuitesSkipped } from '../tools/pg-test/src/probe.ts';

const QUIET_MS = 10_000;
const SLOWEST = 10;

/**
 * Says every 10 s which files are still running when nothing else was printed, and ends
 * the run with the slowest files, the skipped tests counted by file and why, and one plain
 * line, `tests: N passed, N failed, N skipped`; says plainly when the PostgreSQL server suites
 * could not run and how to enable them.
 */
export default class SummaryReporter implements Reporter {
  readonly #running = new Map<TestModule, { started: number; done: number }>();
  #lastNews = Date.now();
  #timer: NodeJS.Timeout | undefined;

  onTestRunStart(): void {
    this.#timer = setInterval(() => this.#heartbeat(), 1_000);
    this.#timer.unref();
  }

  onTestModuleStart(module: TestModule): void {
    this.#running.set(module, { started: Date.now(), done: 0 });
  }

  onTestCaseResult(test: TestCase): void {
    const entry = this.#running.get(test.module);
    if (entry) entry.done++;
  }

  onTestModuleEnd(module: TestModule): void {
    this.#running.delete(module);
    this.#lastNews = Date.now();
  }

  #heartbeat(): void {
    if (Date.now() - this.#lastNews < QUIET_MS || this.#running.size === 0) return;
    this.#lastNews = Date.now();
    const files = [...this.#running].map(
      ([module, { started, done }]) =>
        `${fileOf(module)} (${Math.round((Date.now() - started) / 1000)} s, ${done} tests done)`,
    );
    console.log(`  … still running: ${files.join(', ')}`);
  }

  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    clearInterval(this.#timer);
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skips = new Map<string, number>();
    for (const module of testModules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else {
          skipped++;
          const key = `${fileOf(module)}: ${whySkipped(test)}`;
          skips.set(key, (skips.get(key) ?? 0) + 1);
        }
      }
    }
    const slowest = testModules
      .map((m): [string, number] => [fileOf(m), m.diagnostic().duration])
      .sort((a, b) => b[1] - a[1])
      .slice(0, SLOWEST);
    if (slowest.length) {
      console.log('\nslowest test files:');
      for (const [file, ms] of slowest)
        console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`);
    }
    if (skips.size) {
      console.log('\nskipped tests, by file and why:');
      for (const [key, count] of skips) console.log(`  ${count} in ${key}`);
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

/** A test file as the summary names it: its project, then its path in the project. */
function fileOf(module: TestModule): string {
  return [module.project.name, module.relativeModuleId.replace(/^\//, '')]
    .filter((part) => part !== '')
    .join('/');
}

/**
 * Why a test was skipped: the note of its `t.skip(note)`, else the name of what its file's
 * condition (`skipIf`, `runIf`, `skip`) skipped, the outermost skipped suite or the test.
 */
function whySkipped(test: TestCase): string {
  const result = test.result();
  if (result.state === 'skipped' && result.note) return result.note;
  let skippedBy: TestCase | TestSuite = test;
  for (let at = test.parent; at.type === 'suite'; at = at.parent) {
    if (at.options.mode === 'skip') skippedBy = at;
  }
  return `its condition skips "${skippedBy.name}"`;
}
