// The MCP limits as pure functions: the per-caller window, and answers bounded and redacted.
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../api/auth/principal.ts';
import { boundedJson, RateLimiter, redactAnswer } from '../../api/mcp/limits.ts';

const person = (userId: string, apiKeyId?: string): Principal => ({
  kind: apiKeyId ? 'api_key' : 'user',
  userId,
  username: userId,
  roles: [],
  permissions: new Set(),
  scopes: [],
  ...(apiKeyId ? { apiKeyId } : {}),
});

describe('MCP limits', () => {
  it('counts calls per caller in one-minute windows: a key apart from its person, the next window anew', () => {
    const limiter = new RateLimiter(3);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) expect(limiter.take(person('alice'), t0 + i)).toBe(0);
    expect(limiter.take(person('alice'), t0 + 10)).toBe(60);
    expect(limiter.take(person('alice', 'k1'), t0 + 10)).toBe(0);
    expect(limiter.take(person('bob'), t0 + 10)).toBe(0);
    expect(limiter.take(person('alice'), t0 + 59_000)).toBe(1);
    expect(limiter.take(person('alice'), t0 + 60_000)).toBe(0);
  });

  it('keeps a list within the bound by its first items and says so; refuses anything else too large', () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({ id: i, name: `dashboard ${i}`.padEnd(50, '.') }));
    const cut = boundedJson(200, { items, total: 1000 }, 10_000)!;
    expect(cut.text.length).toBeLessThanOrEqual(10_000);
    expect(cut.truncated!.total).toBe(1000);
    expect(JSON.parse(cut.text).data.items_truncated.shown).toBe(cut.truncated!.shown);
    expect(boundedJson(200, { blob: 'x'.repeat(20_000) }, 10_000)).toBeUndefined();
    expect(boundedJson(200, { a: 1 })!.text).toBe('{"status":200,"data":{"a":1}}');
  });

  it('masks secret-named strings and bearer tokens in free text, and keeps flags', () => {
    const out = redactAnswer({
      password: 'hunter2',
      has_password: true,
      note: 'used Bearer abcdefghijklmnop',
      nested: [{ api_key: 'sy_123456' }],
    });
    expect(out).toEqual({
      password: '[REDACTED]',
      has_password: true,
      note: 'used Bearer [REDACTED]',
      nested: [{ api_key: '[REDACTED]' }],
    });
  });
});
