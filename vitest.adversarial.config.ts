import { defineConfig } from 'vitest/config';

/**
 * `npm run test:adversarial`: the slow part of the adversarial suite (load, and more kill -9
 * rounds), run inside the loopback-only namespace like the default suite
 * (`sh test/tools/run-tests.sh --config vitest.adversarial.config.ts`). One file at a time:
 * each measures the service's latency, descriptors and heap, which other files would disturb.
 */
export default defineConfig({
  test: {
    include: ['test/adversarial/slow/**/*.test.ts', 'test/adversarial/crash.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    execArgv: ['--expose-gc'],
    env: { ADV_KILL_ROUNDS: '12' },
    testTimeout: 120_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
