import { randomBytes } from 'node:crypto';
import { expect, inject } from 'vitest';
import type { Harness } from './harness.ts';
import type { TestSupersetInfo, TestSupersets } from './superset/test-instances.ts';

/** A short unique prefix for names, slugs and usernames, so test files can share a Superset. */
export function uniquePrefix(tag: string): string {
  return `${tag}${randomBytes(3).toString('hex')}`;
}

export async function createEnvironment(
  h: Harness,
  input: { name?: string; baseUrl: string; username: string; password: string; timeoutSeconds?: number; description?: string },
): Promise<string> {
  const r = await h.request('POST', '/api/environments', {
    token: h.adminToken,
    json: {
      name: input.name ?? `env-${randomBytes(4).toString('hex')}`,
      base_url: input.baseUrl,
      username: input.username,
      password: input.password,
      timeout_seconds: input.timeoutSeconds ?? 20,
      ...(input.description ? { description: input.description } : {}),
    },
  });
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}

/** A Switchyard user with the given roles, and its token. */
export async function createUserWithRoles(h: Harness, username: string, roles: string[]): Promise<{ id: string; token: string }> {
  const password = `${username}-password-123`;
  const r = await h.request('POST', '/api/admin/users', {
    token: h.adminToken,
    json: { username, password, roles, email: `${username}@example.com` },
  });
  expect(r.status, r.text).toBe(201);
  return { id: r.body.id as string, token: await h.login(username, password) };
}

export function supersets(): TestSupersets | null {
  return inject('supersets');
}

export function superset(name: keyof TestSupersets): TestSupersetInfo {
  const s = inject('supersets');
  if (!s) throw new Error('no real Superset in this run (SWITCHYARD_TEST_SUPERSET=off)');
  return s[name];
}

export const UNKNOWN_ENV = '00000000-0000-4000-8000-000000000000';
