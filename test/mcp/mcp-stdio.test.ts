// The MCP server over stdio: the SDK's real Client starts `switchyard mcp` (the CLI bridging to
// the running API's /mcp), with an API key or a person's stored login, against the real Superset a.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { writeConfig } from '../../cli/config.ts';
import { registerEnvironment } from '../dashboard-migration/support.ts';
import { createUserWithRoles, uniquePrefix } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';

const BIN = fileURLToPath(new URL('../../cli/switchyard.cjs', import.meta.url));
const KEY_PERMISSIONS = ['environments:READ', 'dashboards:READ', 'dashboards:MIGRATE', 'tasks:READ'];
let h: Harness;
let envA: string;
let envB: string;
let person: { id: string; token: string };
let key: string;
const home = mkdtempSync(path.join(os.tmpdir(), 'mcp-stdio-'));
const clients: Client[] = [];

function cliEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), SWITCHYARD_URL: h.baseUrl, ...extra };
}

async function start(extra: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'stdio-test-agent', version: '1.0.0' });
  clients.push(client);
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: cliEnv(extra), stderr: 'pipe' }));
  return client;
}

function cli(args: string[], extra: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: cliEnv(extra), timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const answerOf = (r: CallToolResult) => JSON.parse((r.content as Array<{ text: string }>)[1]!.text) as { status: number; data: any };

// Without a real Superset (SWITCHYARD_TEST_SUPERSET=off, refused under CI: test/support/ci.ts) the file is skipped, not failed.
const enabled = inject('supersets') !== null;

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness();
  const p = uniquePrefix('mcps');
  envA = await registerEnvironment(h, 'a', `${p}-a`);
  envB = await registerEnvironment(h, 'a', `${p}-a2`);
  const admin = h.as(h.adminToken);
  expect((await admin('POST', '/api/admin/roles', { json: { name: `${p}-minter`, permissions: ['admin:settings:WRITE'] } })).status).toBe(
    201,
  );
  person = await createUserWithRoles(h, `${p}-operator`, ['Operator', `${p}-minter`]);
  const k = await h.request('POST', '/api/admin/api-keys', {
    token: person.token,
    json: { name: `${p}-ide`, permissions: KEY_PERMISSIONS },
  });
  expect(k.status, k.text).toBe(201);
  key = k.body.key;
  expect((await admin('PUT', `/api/admin/users/${person.id}`, { json: { roles: ['Operator'] } })).status).toBe(200);
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await h?.close();
});

describe.runIf(enabled)('switchyard mcp (stdio)', () => {
  it("lists an API key's tools and answers them from the real Superset", async () => {
    const c = await start({ SWITCHYARD_API_KEY: key });
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['environments_list', 'dashboards_list', 'dashboards_migrate', 'tasks_get']));
    expect(names).not.toContain('git_dashboards_commit');
    const dashboards = answerOf((await c.callTool({ name: 'dashboards_list', arguments: { env_id: envA } })) as CallToolResult);
    expect(dashboards.status, JSON.stringify(dashboards)).toBe(200);
    expect(Array.isArray(dashboards.data.items)).toBe(true);
  });

  it("leaves a risky call pending: the key's `mcp confirm` is refused, the person's stored login confirms", async () => {
    const c = await start({ SWITCHYARD_API_KEY: key });
    const r = answerOf(
      (await c.callTool({
        name: 'environments_db_mappings_update',
        arguments: { env_id: envA, target_env_id: envB, mappings: [] },
      })) as CallToolResult,
    );
    expect(r.data.status, JSON.stringify(r)).toBe('awaiting_confirmation');
    const id = r.data.confirmation_id as string;
    const byKey = await cli(['mcp', 'confirm', id], { SWITCHYARD_API_KEY: key });
    expect(byKey.code, byKey.stderr).not.toBe(0);
    expect(byKey.stderr).toMatch(/403/);
    const byPerson = await cli(['-o', 'json', 'mcp', 'confirm', id], { SWITCHYARD_TOKEN: person.token });
    expect(byPerson.code, byPerson.stderr).toBe(0);
    expect(JSON.parse(byPerson.stdout)).toMatchObject({ confirmation_id: id, status: 'confirmed' });
  });

  it('works with the stored login of a person too, and fails to start with a bad key', async () => {
    // What `switchyard login` stores (cli/config.ts): the address and the person's token.
    writeConfig({ url: h.baseUrl, token: person.token }, path.join(home, '.config', 'switchyard', 'config.json'));
    const c = await start({});
    expect((await c.listTools()).tools.map((t) => t.name)).toContain('git_dashboards_commit');
    await expect(start({ SWITCHYARD_API_KEY: 'sy_not_a_key' })).rejects.toThrow(/401|Unauthorized|invalid/i);
  });
});
