import type { Reporter, TestModule } from 'vitest/node';
import type { TestRunEndReason } from 'vitest/node';

/**
 * Prints the plain closing line `N passed, N failed, N skipped` after vitest's own summary,
 * the form CI reads in any language. Skipped tests are counted apart, never as passed.
 *
 * `failed` counts failed tests, plus every file or suite whose own code failed (a file that
 * does not load, a throwing beforeAll/afterAll: its tests are then skipped, not failed), plus
 * errors outside any test. A run vitest calls failed never closes with `0 failed`: if nothing
 * above explains it (no test files found, say), the run itself counts as one failure.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>, reason: TestRunEndReason): void {
    let passed = 0;
    let failed = errors.length;
    let skipped = 0;
    for (const module of modules) {
      if (module.errors().length > 0) failed += 1;
      for (const suite of module.children.allSuites()) if (suite.errors().length > 0) failed += 1;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    if (reason !== 'passed' && failed === 0) failed = 1;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
