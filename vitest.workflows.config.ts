import { defineConfig } from 'vitest/config';

/**
 * The fast workflow tests (test/workflows/, docs/tests.md#fast-workflow-tests): workflows on
 * Temporal's time-skipping test server with mocked activities. No global setup: they need no
 * PostgreSQL, Temporal dev server or Superset, so they run in seconds (`npm run test:workflows`,
 * part of `npm test` before the end-to-end files).
 */
export default defineConfig({
  test: {
    include: ['test/workflows/**/*.test.ts'],
    // Forks, not threads: Temporal's native bridge misbehaves in worker_threads.
    pool: 'forks',
    maxWorkers: 2,
    // A bound for a hang (a wrong workflow never answers a held mock), not a measure of speed: a first test takes 15 s at load 22.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
