import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../lib/config.ts';

describe('ASSISTANT_CONFIRMATION_TTL_SECONDS', () => {
  it('defaults to ten minutes and is checked at start', () => {
    expect(loadConfig({}).ASSISTANT_CONFIRMATION_TTL_SECONDS).toBe(600);
    expect(loadConfig({ ASSISTANT_CONFIRMATION_TTL_SECONDS: '5' }).ASSISTANT_CONFIRMATION_TTL_SECONDS).toBe(5);
    for (const bad of ['0', '-1', '1.5', 'ten', '86401']) {
      expect(() => loadConfig({ ASSISTANT_CONFIRMATION_TTL_SECONDS: bad }), bad).toThrow(ConfigError);
    }
  });
});
