import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The slow adversarial part runs with `npm run test:adversarial` (vitest.adversarial.config.ts).
    exclude: [...configDefaults.exclude, 'test/adversarial/slow/**'],
    pool: 'forks',
    // Memory tests measure what is kept after a full GC (test/adversarial/harness.ts peakRetained).
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
