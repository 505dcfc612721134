// The MCP server over Streamable HTTP, with the SDK's own Client, against the running service
// (real PostgreSQL, Temporal, a worker) and the real Superset 6.1.0 pair a -> b.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { allRoutes } from '../../api/app.ts';
import type { AppContext } from '../../api/context.ts';
import { deriveTools } from '../../api/mcp/tools.ts';
import { BUILTIN_ROLES } from '../../contracts/permissions.ts';
import { inert } from '../../scripts/openapi-document.ts';
import { seedForMigration, startRealPair, type RealPair } from '../dashboard-migration/real-pair.ts';
import { createUserWithRoles, uniquePrefix } from '../support/environments.ts';

const AGENT = 'switchyard-test-agent';
const KEY_PERMISSIONS = ['environments:READ', 'dashboards:READ', 'dashboards:MIGRATE', 'tasks:READ'];
let pair: RealPair;
let seeded: Awaited<ReturnType<typeof seedForMigration>>;
const people: Record<string, { id: string; token: string }> = {};
let operatorKey: string;
const open: Client[] = [];
/** Every tool answer of this file, for the last test: none may carry a secret. */
const transcript: string[] = [];

async function connect(auth: { token?: string; apiKey?: string }, elicit?: (message: string) => ElicitResult): Promise<Client> {
  const headers: Record<string, string> = {};
  if (auth.token) headers.Authorization = `Bearer ${auth.token}`;
  if (auth.apiKey) headers['X-API-Key'] = auth.apiKey;
  const client = new Client({ name: AGENT, version: '1.0.0' }, elicit ? { capabilities: { elicitation: { form: {} } } } : undefined);
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (req) => elicit(req.params.message));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${pair.h.baseUrl}/mcp`), { requestInit: { headers } }));
  open.push(client);
  return client;
}

/** The JSON a tool answered (its second text block; the first is the data notice). */
function answerOf(r: CallToolResult): { status: number; data: any } {
  const blocks = r.content as Array<{ type: string; text: string }>;
  transcript.push(...blocks.map((b) => b.text));
  expect(blocks[0]!.text).toMatch(/never instructions/);
  return JSON.parse(blocks[1]!.text);
}

const toolNames = async (c: Client) => (await c.listTools()).tools.map((t) => t.name).sort();
const allTools = () => deriveTools(allRoutes(inert() as AppContext));

// Without a real Superset (SWITCHYARD_TEST_SUPERSET=off, refused under CI: test/support/ci.ts) the file is skipped, not failed.
const enabled = inject('supersets') !== null;

beforeAll(async () => {
  if (!enabled) return;
  pair = await startRealPair();
  const p = uniquePrefix('mcp');
  for (const role of ['Viewer', 'Operator', 'ReleaseManager'])
    people[role] = await createUserWithRoles(pair.h, `${p}-${role.toLowerCase()}`, [role]);
  // The agent's key is the Operator's own (it acts for them): minted while they briefly may mint keys.
  const admin = pair.h.as(pair.h.adminToken);
  const minter = await admin('POST', '/api/admin/roles', { json: { name: `${p}-minter`, permissions: ['admin:settings:WRITE'] } });
  expect(minter.status, minter.text).toBe(201);
  expect((await admin('PUT', `/api/admin/users/${people.Operator!.id}`, { json: { roles: ['Operator', `${p}-minter`] } })).status).toBe(
    200,
  );
  const k = await pair.h.request('POST', '/api/admin/api-keys', {
    token: people.Operator!.token,
    json: { name: `${p}-agent`, permissions: KEY_PERMISSIONS },
  });
  expect(k.status, k.text).toBe(201);
  operatorKey = k.body.key;
  expect((await admin('PUT', `/api/admin/users/${people.Operator!.id}`, { json: { roles: ['Operator'] } })).status).toBe(200);
  seeded = await seedForMigration(pair, 'mcp', 1);
}, 300_000);

afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
  await pair?.close();
});

describe.runIf(enabled)('MCP over Streamable HTTP', () => {
  it('answers 401 with a bearer challenge and a JSON-RPC error without credentials', async () => {
    const r = await fetch(`${pair.h.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await r.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    await expect(connect({ token: 'not-a-token' })).rejects.toThrow(/401|Unauthorized/);
  });

  it('answers malformed JSON-RPC with the protocol error, never a 5xx', async () => {
    const r = await fetch(`${pair.h.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${pair.h.adminToken}`,
      },
      body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('lists each caller exactly the tools its permissions allow, derived from the route table', async () => {
    const tools = allTools();
    const expected = (perms: readonly string[] | 'all') =>
      tools
        .filter((t) => perms === 'all' || typeof t.route.access !== 'object' || perms.includes(t.route.access.permission))
        .map((t) => t.name)
        .sort();
    expect(await toolNames(await connect({ token: pair.h.adminToken }))).toEqual(expected('all'));
    for (const role of ['Viewer', 'Operator', 'ReleaseManager'] as const)
      expect(await toolNames(await connect({ token: people[role]!.token })), role).toEqual(expected(BUILTIN_ROLES[role]!.permissions));
    const key = await toolNames(await connect({ apiKey: operatorKey }));
    expect(key).toEqual(expected(KEY_PERMISSIONS));
    expect(key).toEqual(expect.arrayContaining(['environments_list', 'dashboards_list', 'dashboards_migrate', 'tasks_get']));
    const viewer = await toolNames(await connect({ token: people.Viewer!.token }));
    expect(viewer).toContain('dashboards_list');
    expect(viewer).not.toContain('dashboards_migrate');
    // Approvals stay a person's, and nothing that takes a secret is a tool.
    expect(expected('all')).not.toContain('clean_release_candidates_approve');
    expect(expected('all')).not.toContain('environments_create');
  });

  it("refuses a Viewer's call to a write tool, and starts nothing", async () => {
    const viewer = await connect({ token: people.Viewer!.token });
    const before = (await pair.h.request('GET', '/api/tasks', { token: pair.h.adminToken })).body.total;
    const r = (await viewer.callTool({
      name: 'dashboards_migrate',
      arguments: { source_env_id: pair.sourceEnv, target_env_id: pair.targetEnv, dashboard_ids: seeded.ids, dry_run: true },
    })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect((r.content as Array<{ text: string }>)[0]!.text).toMatch(/Forbidden.*dashboards:MIGRATE/);
    expect((await pair.h.request('GET', '/api/tasks', { token: pair.h.adminToken })).body.total).toBe(before);
  });

  it('lists environments and dashboards as data, marked as such', async () => {
    const agent = await connect({ apiKey: operatorKey });
    const envs = answerOf((await agent.callTool({ name: 'environments_list', arguments: {} })) as CallToolResult);
    expect(envs.status).toBe(200);
    expect(envs.data.items.map((e: any) => e.id)).toEqual(expect.arrayContaining([pair.sourceEnv, pair.targetEnv]));
    expect(envs.data.items[0].has_password).toBe(true);
    const dash = (await agent.callTool({
      name: 'dashboards_get',
      arguments: { id: seeded.ids[0], env_id: pair.sourceEnv },
    })) as CallToolResult;
    expect(dash._meta?.['switchyard/content']).toBe('data');
    expect(answerOf(dash).status).toBe(200);
  });

  it('runs a dry run at once, with progress notifications from the task until it ends, and serves its logs as a resource', async () => {
    const agent = await connect({ apiKey: operatorKey });
    const messages: string[] = [];
    const r = (await agent.callTool(
      {
        name: 'dashboards_migrate',
        arguments: {
          source_env_id: pair.sourceEnv,
          target_env_id: pair.targetEnv,
          dashboard_ids: seeded.ids,
          db_mappings: seeded.mapping,
          dry_run: true,
        },
      },
      undefined,
      { onprogress: (p) => messages.push(p.message ?? ''), timeout: 240_000 },
    )) as CallToolResult;
    const a = answerOf(r);
    expect(a.status, JSON.stringify(a)).toBe(202);
    const taskId = a.data.task_id as string;
    expect(messages[0]).toBe(`task ${taskId} accepted`);
    expect(messages.length).toBeGreaterThan(1);
    expect(a.data.task.status).toBe('SUCCEEDED');
    const logs = await agent.readResource({ uri: `switchyard://tasks/${taskId}/logs` });
    const page = JSON.parse((logs.contents[0] as { text: string }).text);
    expect(page.items.length).toBeGreaterThan(0);
    expect(page.items[0].message).toMatch(/via MCP client 'switchyard-test-agent'/);
    const report = await agent.readResource({ uri: `switchyard://tasks/${taskId}/report` });
    expect(JSON.parse((report.contents[0] as { text: string }).text).status).toBe('SUCCEEDED');
    const listed = (await agent.listResources()).resources.map((x) => x.uri);
    expect(listed).toContain(`switchyard://tasks/${taskId}/logs`);
  }, 300_000);

  it("waits for a person's confirmation: the agent's own key cannot confirm; the person can, and the migration runs", async () => {
    const agent = await connect({ apiKey: operatorKey });
    const r = answerOf(
      (await agent.callTool(
        {
          name: 'dashboards_migrate',
          arguments: {
            source_env_id: pair.sourceEnv,
            target_env_id: pair.targetEnv,
            dashboard_ids: seeded.ids,
            db_mappings: seeded.mapping,
          },
        },
        undefined,
        { timeout: 120_000 },
      )) as CallToolResult,
    );
    expect(r.data.status).toBe('awaiting_confirmation');
    const id = r.data.confirmation_id as string;
    expect(r.data.dry_run.task_id).toEqual(expect.any(String));
    const migrations = async () =>
      (await pair.h.request('GET', '/api/tasks?task_type=migration&page_size=100', { token: pair.h.adminToken })).body.items.filter(
        (t: any) => t.params?.dry_run === false || t.input?.dryRun === false,
      ).length;
    const before = await migrations();
    // The agent's key: refused (the assistant answers people signed in), nothing runs.
    const byKey = await pair.h.request('POST', `/api/assistant/confirmations/${id}/confirm`, { apiKey: operatorKey });
    expect(byKey.status, byKey.text).toBe(403);
    const pending = answerOf(
      (await agent.callTool({ name: 'mcp_confirmations_get', arguments: { confirmation_id: id } })) as CallToolResult,
    );
    expect(pending.data).toMatchObject({ status: 'pending', task_id: null });
    expect(await migrations()).toBe(before);
    // The person the key acts for confirms, signed in.
    const ok = await pair.h.request('POST', `/api/assistant/confirmations/${id}/confirm`, { token: people.Operator!.token });
    expect(ok.status, ok.text).toBe(200);
    const taskId = ok.body.task_id as string;
    const task = await pair.h.waitForTask(taskId, undefined, 240_000);
    expect(task.status, JSON.stringify(task.result)).toBe('SUCCEEDED');
    const done = answerOf((await agent.callTool({ name: 'mcp_confirmations_get', arguments: { confirmation_id: id } })) as CallToolResult);
    expect(done.data).toMatchObject({ status: 'confirmed', task_id: taskId });
    const logs = await pair.h.request('GET', `/api/tasks/${taskId}/logs`, { token: pair.h.adminToken });
    expect(logs.body.items[0].message).toMatch(/via MCP client 'switchyard-test-agent'/);
    const events = await pair.h.request('GET', '/api/admin/security-events?event_type=MCP_TOOL_CALLED&page_size=100', {
      token: pair.h.adminToken,
    });
    expect(events.body.items.some((e: any) => e.detail?.client === AGENT && e.detail?.confirmation_id === id)).toBe(true);
  }, 400_000);

  it("asks a person's own session through elicitation and runs on their yes; an API key's session is never asked", async () => {
    const asked: string[] = [];
    const yes = (message: string): ElicitResult => (asked.push(message), { action: 'accept', content: { confirm: true } });
    const args = { env_id: pair.sourceEnv, target_env_id: pair.targetEnv, mappings: seeded.mapping };
    const byKey = await connect({ apiKey: operatorKey }, yes);
    const pending = answerOf((await byKey.callTool({ name: 'environments_db_mappings_update', arguments: args })) as CallToolResult);
    expect(pending.data.status).toBe('awaiting_confirmation');
    expect(asked).toEqual([]);
    const person = await connect({ token: people.Operator!.token }, yes);
    const done = answerOf((await person.callTool({ name: 'environments_db_mappings_update', arguments: args })) as CallToolResult);
    expect(asked.length).toBe(1);
    expect(asked[0]).toMatch(/^Confirm\? .*via MCP client 'switchyard-test-agent' asks/);
    expect(done, JSON.stringify(done)).toMatchObject({ status: 200, data: { status: 'confirmed' } });
    const saved = await pair.h.request('GET', `/api/environments/${pair.sourceEnv}/db-mappings/${pair.targetEnv}`, {
      token: pair.h.adminToken,
    });
    expect(JSON.stringify(saved.body)).toContain(String(seeded.mapping[0]!.target_database_id));
    const no = await connect({ token: people.Operator!.token }, () => ({ action: 'decline' }));
    const refused = answerOf(
      (await no.callTool({ name: 'environments_db_mappings_update', arguments: { ...args, mappings: [] } })) as CallToolResult,
    );
    expect(refused.data.status).toBe('cancelled');
  });

  it('carried no credential in any tool answer', () => {
    expect(transcript.length).toBeGreaterThan(10);
    const secrets = [operatorKey, pair.h.adminToken, ...Object.values(people).map((p) => p.token)];
    for (const text of transcript) for (const secret of secrets) expect(text.includes(secret)).toBe(false);
  });
});
