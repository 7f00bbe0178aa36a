import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import LanesFirst from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The slow adversarial part runs with `npm run test:adversarial` (vitest.adversarial.config.ts).
    exclude: [...configDefaults.exclude, 'test/adversarial/slow/**'],
    pool: 'forks',
    // A worker's files share its loaded modules (the service's and the helpers'), imported once
    // per worker instead of once per file: an eighth of the suite's CPU went to imports. Files hold
    // no state in modules of their own that another could see (docs/testing.md#where-the-time-goes).
    isolate: false,
    // Files side by side, one more than the cores: most of a file's time is spent waiting on its
    // subprocesses, sockets and timers, not on the CPU (docs/testing.md#where-the-time-goes).
    // Files share nothing: each has its own temp HOME, ephemeral ports, its own programs.
    maxWorkers: Number(process.env.SPACE_TEST_WORKERS) || availableParallelism() + 1,
    // The real-program lanes, the longest files, start first (test/sequencer.ts).
    sequence: { sequencer: LanesFirst },
    // Memory tests measure what is kept after a full GC (test/adversarial/harness.ts peakRetained).
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
    // expect.poll's own default (1 s) is outrun by a loaded 2-core machine waiting for processes
    // to spawn or a page to reload; a poll still ends as soon as its assertion holds.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 30_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
