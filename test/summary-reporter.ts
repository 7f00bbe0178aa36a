import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import type { TestRunEndReason } from 'vitest/node';

/** How many of the slowest files are named before the closing line. */
const SLOWEST = 10;

/**
 * Prints the plain closing line `N passed, N failed, N skipped` after vitest's own summary,
 * the form CI reads in any language. Skipped tests are counted apart, never as passed.
 * Just before it: the slowest files and the run's wall time, where the time went.
 *
 * `failed` counts failed tests, plus every file or suite whose own code failed (a file that
 * does not load, a throwing beforeAll/afterAll: its tests are then skipped, not failed), plus
 * errors outside any test. A run vitest calls failed never closes with `0 failed`: if nothing
 * above explains it (no test files found, say), the run itself counts as one failure.
 */
export default class SummaryReporter implements Reporter {
  private started = performance.now();

  onTestRunStart(): void {
    this.started = performance.now();
  }

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
    process.stdout.write(`\n${slowest(modules)}wall time ${seconds(performance.now() - this.started)}\n`);
    process.stdout.write(`${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

/** The slowest files, one a line, with their own duration (set-up, import and tests). */
function slowest(modules: ReadonlyArray<TestModule>): string {
  const timed = modules.map((m) => ({ file: path.relative(process.cwd(), m.moduleId), ms: fileDuration(m) })).sort((a, b) => b.ms - a.ms);
  if (timed.length < 2) return '';
  const lines = timed.slice(0, SLOWEST).map((t) => `  ${seconds(t.ms).padStart(7)}  ${t.file}`);
  return `slowest files:\n${lines.join('\n')}\n`;
}

function fileDuration(module: TestModule): number {
  const d = module.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${(s % 60).toFixed(0).padStart(2, '0')} s`;
}
