// The permission matrix of the MCP tools: every tool derived from the route table, for a person
// of each built-in role and an API key. A caller is listed exactly the tools its permissions
// allow; a call to any other is refused before anything runs; and an administrator's call to every
// tool, with placeholder arguments, gets the route's own 4xx, a result or a pending
// confirmation, never a 5xx (so every derived tool really reaches its route).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../../api/app.ts';
import type { AppContext } from '../../api/context.ts';
import { deriveTools, type ToolDef } from '../../api/mcp/tools.ts';
import { BUILTIN_ROLES } from '../../contracts/permissions.ts';
import { inert } from '../../scripts/openapi-document.ts';
import { createUserWithRoles, uniquePrefix } from '../support/environments.ts';
import { createHarness, type Harness } from '../support/harness.ts';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const KEY_PERMISSIONS = ['tasks:READ', 'dashboards:READ', 'git:READ'];
let h: Harness;
const callers: Record<string, { headers: Record<string, string>; permissions: readonly string[] | 'all' }> = {};
const clients: Client[] = [];
const tools = deriveTools(allRoutes(inert() as AppContext));

async function connect(headers: Record<string, string>): Promise<Client> {
  const c = new Client({ name: 'matrix-agent', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), { requestInit: { headers } }));
  clients.push(c);
  return c;
}

const permits = (t: ToolDef, perms: readonly string[] | 'all') =>
  perms === 'all' || typeof t.route.access !== 'object' || perms.includes(t.route.access.permission);

/** A value of the schema's type that names nothing that exists. */
function placeholder(s: Record<string, any>): unknown {
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.const !== undefined) return s.const;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'integer' || type === 'number') return 999_999;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  if (type === 'object') return {};
  if (s.format === 'uuid' || /uuid/i.test(String(s.pattern ?? ''))) return UNKNOWN;
  if (s.anyOf || s.oneOf) return placeholder((s.anyOf ?? s.oneOf)[0]);
  return UNKNOWN;
}

function argsOf(t: ToolDef): Record<string, unknown> {
  const props = (t.inputSchema.properties ?? {}) as Record<string, Record<string, any>>;
  return Object.fromEntries((t.inputSchema.required ?? []).map((name) => [name, placeholder(props[name] ?? {})]));
}

beforeAll(async () => {
  h = await createHarness();
  const p = uniquePrefix('mcpm');
  callers.Admin = { headers: { Authorization: `Bearer ${h.adminToken}` }, permissions: 'all' };
  for (const role of ['Viewer', 'Operator', 'ReleaseManager'] as const) {
    const u = await createUserWithRoles(h, `${p}-${role.toLowerCase()}`, [role]);
    callers[role] = { headers: { Authorization: `Bearer ${u.token}` }, permissions: BUILTIN_ROLES[role]!.permissions };
  }
  const k = await h.request('POST', '/api/admin/api-keys', {
    token: h.adminToken,
    json: { name: `${p}-key`, permissions: KEY_PERMISSIONS },
  });
  expect(k.status, k.text).toBe(201);
  callers['API key'] = { headers: { 'X-API-Key': k.body.key }, permissions: KEY_PERMISSIONS };
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await h?.close();
});

describe('MCP permission matrix', () => {
  it('derives a tool for every route an agent may call, each named once', () => {
    expect(tools.length).toBeGreaterThan(40);
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    for (const t of tools) expect(t.name, t.route.path).toMatch(/^[a-z][a-z0-9_]{2,63}$/);
  });

  it('lists each caller exactly its tools, and refuses every other tool before it runs', async () => {
    for (const [who, caller] of Object.entries(callers)) {
      const c = await connect(caller.headers);
      const listed = (await c.listTools()).tools.map((t) => t.name).sort();
      expect(listed, who).toEqual(
        tools
          .filter((t) => permits(t, caller.permissions))
          .map((t) => t.name)
          .sort(),
      );
      for (const t of tools.filter((x) => !permits(x, caller.permissions))) {
        const r = (await c.callTool({ name: t.name, arguments: argsOf(t) })) as CallToolResult;
        expect(r.isError, `${who} ${t.name}`).toBe(true);
        expect((r.content as Array<{ text: string }>)[0]!.text, `${who} ${t.name}`).toMatch(/^Forbidden/);
      }
    }
    const refused = await h.request('GET', '/api/admin/security-events?event_type=MCP_TOOL_CALLED&outcome=failure&page_size=5', {
      token: h.adminToken,
    });
    expect(refused.body.items[0].detail).toMatchObject({ reason: 'forbidden', client: 'matrix-agent' });
  }, 300_000);

  it("reaches every tool's route: an administrator's placeholder call is a result, a 4xx or a pending confirmation, never a 5xx", async () => {
    const c = await connect(callers.Admin!.headers);
    for (const t of tools) {
      const r = (await c.callTool({ name: t.name, arguments: argsOf(t) })) as CallToolResult;
      const text = (r.content as Array<{ text: string }>).at(-1)!.text;
      const answer = JSON.parse(text) as { status: number; data: any };
      expect(answer.status, `${t.name}: ${text.slice(0, 300)}`).toBeLessThan(500);
      if (t.risk && answer.status === 202 && !t.dryRunArgument) expect(answer.data.status, t.name).toBe('awaiting_confirmation');
    }
  }, 300_000);

  it("answers a session only to the caller that opened it: anyone else's request with its id is 404", async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`${h.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          ...headers,
        },
        body: JSON.stringify(body),
      });
    const init = await post(callers.Admin!.headers, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id')!;
    await init.body?.cancel();
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const other = await post({ ...callers.Viewer!.headers, 'mcp-session-id': session }, list);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { message: string } }).error.message).toBe('Session not found');
    const mine = await post({ ...callers.Admin!.headers, 'mcp-session-id': session }, list);
    expect(mine.status).toBe(200);
    await mine.body?.cancel();
  });
});
