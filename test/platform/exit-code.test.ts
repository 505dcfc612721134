import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('the test command', () => {
  it('exits non-zero when a test fails, even with embedded PostgreSQL loaded in global setup', () => {
    const r = spawnSync(
      process.execPath,
      ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/fixtures/exit-code/vitest.config.ts'],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(r.stdout + r.stderr).toContain('fails on purpose');
    expect(r.status).toBe(1);
  });
});
