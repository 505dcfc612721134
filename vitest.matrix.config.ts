import { defineConfig } from 'vitest/config';

/**
 * `npm run test:matrix`: migrations across every ordered pair of Superset releases and the
 * read-side checks against each, on one instance per release (test/matrix/global-setup.ts).
 * Writes docs/version-matrix.md and the README's matrix section.
 */
export default defineConfig({
  test: {
    include: ['test/matrix/**/*.test.ts'],
    globalSetup: ['test/matrix/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 300_000,
    hookTimeout: 900_000,
    teardownTimeout: 60_000,
    reporters: ['default'],
  },
});
