import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The version matrix has its own instances and config (vitest.matrix.config.ts); the fast
    // workflow tests need none of this file's global setup (vitest.workflows.config.ts).
    exclude: [...configDefaults.exclude, 'test/matrix/**', 'test/workflows/**'],
    globalSetup: ['test/global-setup.ts'],
    // Forks, not threads: Temporal's native bridge misbehaves in worker_threads.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    reporters: ['default'],
  },
});
