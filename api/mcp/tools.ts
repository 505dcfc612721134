/**
 * MCP tools, derived from the route table: one tool per route an agent may call, named
 * `<resource>_<action>` from the route's path and method, described by the route's own summary,
 * taking the same zod schemas the route validates (as JSON Schema, like the OpenAPI document),
 * needing the route's access rule. Nothing here is written a second time: a route added to the
 * table is a tool at the next start, unless one of the rules below keeps it out.
 */
import { z, type ZodType } from 'zod';
import type { Permission } from '../../contracts/permissions.ts';
import { isSecretKey } from '../../lib/redact.ts';
import { can, isAdmin, type Principal } from '../auth/principal.ts';
import type { Access, AnyRoute } from '../http/routes.ts';

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[]; type?: unknown };

/** Why a route is not a tool (the first rule it meets), or null when it is one. */
export type Exclusion =
  'public' | 'transport' | 'administration' | 'approval' | 'deprecated' | 'not_json' | 'upload' | 'carries_secret' | 'assistant';

/** What confirming a risky tool protects: writes into an environment, a delete. */
export type Risk = 'writes_environment' | 'deletes';

export interface ToolDef {
  name: string;
  route: AnyRoute;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  /** Where each argument goes: a path parameter, the query string, or the body (`body` alone: the whole body). */
  places: Record<string, 'path' | 'query' | 'body'>;
  /** The whole body sits under the `body` argument (a body that is not a plain object, or names another place's argument). */
  nestedBody: boolean;
  risk: Risk | null;
  /** The argument that turns a risky call into a dry run (it writes nothing, so it needs no confirmation). */
  dryRunArgument?: string;
}

/** Permissions whose routes write into an environment's Superset (or its connection). */
const ENVIRONMENT_WRITES: ReadonlySet<Permission> = new Set([
  'dashboards:MIGRATE',
  'datasets:WRITE',
  'dataset_review:LAUNCH',
  'environments:WRITE',
]);
/** Actions that write into an environment whatever the permission naming them (a restore, a deploy). */
const ENVIRONMENT_WRITE_ACTIONS = new Set(['restore', 'deploy']);
/** Tags whose routes stay with people in the console: administration, sign-in, their own profile, the assistant. */
const PEOPLE_ONLY_TAGS = new Set(['Auth', 'Admin', 'LLM providers', 'Profile', 'Health']);

const literals = (path: string) =>
  path
    .split('/')
    .filter((s) => s && !s.startsWith(':') && s !== 'api' && !/^v\d+$/.test(s))
    .map((s) => s.replace(/-/g, '_'));

export function exclusionOf(route: AnyRoute): Exclusion | null {
  if (route.access === 'public') return 'public';
  if (route.tag === 'MCP' && !route.path.startsWith('/api/')) return 'transport';
  if (route.access === 'admin' || PEOPLE_ONLY_TAGS.has(route.tag)) return 'administration';
  if (typeof route.access === 'object' && route.access.permission.startsWith('admin:')) return 'administration';
  if (route.tag === 'Assistant') return 'assistant';
  // Approvals compare people: approving, rejecting, publishing or revoking stays a person's.
  if (typeof route.access === 'object' && route.access.permission.endsWith(':APPROVE')) return 'approval';
  if (/\/(approve|reject)$/.test(route.path)) return 'approval';
  if (/deprecated/i.test(route.summary)) return 'deprecated';
  if (route.multipart && Object.values(route.multipart.files).some((f) => f.required)) return 'upload';
  const ok = Object.entries(route.responses).find(([s]) => s.startsWith('2'))?.[1];
  const types = [ok?.contentType ?? 'application/json'].flat();
  if (types.some((t) => t !== 'application/json')) return 'not_json';
  if (route.body && schemaNamesSecret(toJsonSchema(route.body))) return 'carries_secret';
  return null;
}

/** A stored secret never travels through an agent: a route whose body takes one is no tool. */
function schemaNamesSecret(s: JsonSchema, depth = 0): boolean {
  if (depth > 6) return false;
  for (const [k, v] of Object.entries(s.properties ?? {})) if (isSecretKey(k) || schemaNamesSecret(v, depth + 1)) return true;
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    for (const sub of (s[key] as JsonSchema[] | undefined) ?? []) if (schemaNamesSecret(sub, depth + 1)) return true;
  return false;
}

export function riskOf(route: AnyRoute): Risk | null {
  if (route.method === 'get') return null;
  if (route.method === 'delete') return 'deletes';
  const last = literals(route.path).at(-1) ?? '';
  if (typeof route.access === 'object' && ENVIRONMENT_WRITES.has(route.access.permission)) return 'writes_environment';
  if (ENVIRONMENT_WRITE_ACTIONS.has(last) && route.path.endsWith(last)) return 'writes_environment';
  return null;
}

function toJsonSchema(schema: ZodType): JsonSchema {
  const s = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete s.$schema;
  return s;
}

const VERBS: Record<string, string> = { post: 'create', put: 'update', patch: 'update', delete: 'delete' };

/** The name before collisions: the path's words; a route ending in a parameter says its verb. */
function baseName(route: AnyRoute): string {
  const words = literals(route.path);
  const endsInParam = route.path.split('/').at(-1)!.startsWith(':');
  if (endsInParam) return [...words, route.method === 'get' ? 'get' : VERBS[route.method]].join('_');
  if (words.length === 1) return [...words, route.method === 'get' ? 'list' : VERBS[route.method]].join('_');
  return words.join('_');
}

/** Names for the routes: the base name, with the verb added to every route that shares it. */
function names(routes: AnyRoute[]): string[] {
  const bases = routes.map(baseName);
  const named = bases.map((b, i) => {
    if (bases.filter((x) => x === b).length === 1) return b;
    const r = routes[i]!;
    return `${b}_${r.method === 'get' ? 'list' : VERBS[r.method]}`;
  });
  return named;
}

function inputOf(route: AnyRoute): Pick<ToolDef, 'inputSchema' | 'places' | 'nestedBody'> {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const places: ToolDef['places'] = {};
  const add = (schema: ZodType | undefined, where: 'path' | 'query') => {
    if (!schema) return;
    const js = toJsonSchema(schema);
    for (const [name, prop] of Object.entries(js.properties ?? {})) {
      properties[name] = prop;
      places[name] = where;
      if (where === 'path' || (js.required ?? []).includes(name)) required.push(name);
    }
  };
  add(route.params, 'path');
  add(route.query, 'query');
  let nestedBody = false;
  if (route.body) {
    const js = toJsonSchema(route.body);
    const flat =
      js.type === 'object' &&
      js.properties &&
      !js.anyOf &&
      !js.oneOf &&
      Object.keys(js.properties).every((k) => !(k in places) && k !== 'body');
    if (flat) {
      for (const [name, prop] of Object.entries(js.properties!)) {
        properties[name] = prop;
        places[name] = 'body';
      }
      required.push(...(js.required ?? []));
    } else {
      nestedBody = true;
      properties.body = js;
      places.body = 'body';
      required.push('body');
    }
  }
  return { inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}) }, places, nestedBody };
}

function accessText(access: Access): string {
  return access === 'authenticated'
    ? 'any signed-in caller'
    : typeof access === 'object'
      ? `permission ${access.permission}`
      : String(access);
}

/** Every tool of the route table, in its order. Throws at start when two routes would share a name. */
export function deriveTools(routes: AnyRoute[]): ToolDef[] {
  // Named over the whole table but its deprecated routes (whose successors keep the name), so that
  // a route leaving or joining the tools renames no other.
  const current = routes.filter((r) => exclusionOf(r) !== 'deprecated');
  const all = names(current);
  const eligible = current.flatMap((route, i) => (exclusionOf(route) === null ? [{ route, name: all[i]! }] : []));
  const dup = eligible.find((t, i) => eligible.findIndex((o) => o.name === t.name) !== i);
  if (dup) throw new Error(`two routes derive the MCP tool name '${dup.name}'`);
  return eligible.map(({ route, name }) => {
    const input = inputOf(route);
    const risk = riskOf(route);
    const dryRunArgument = risk && input.places.dry_run === 'body' ? 'dry_run' : undefined;
    const confirm = risk
      ? ` Risky (${risk.replace('_', ' ')}): answers with a pending confirmation that a person confirms${dryRunArgument ? '; `dry_run: true` runs at once' : ''}.`
      : '';
    return {
      name,
      route,
      // Our own words only: the summary in the route table, never anything read from Superset.
      description: `${route.summary}. ${route.method.toUpperCase()} ${route.path}; needs ${accessText(route.access)}.${confirm}`,
      ...input,
      risk,
      ...(dryRunArgument ? { dryRunArgument } : {}),
    };
  });
}

/** Whether the caller passes the tool's access rule (tools/list shows only these; a call to another is refused). */
export function allowed(tool: ToolDef, principal: Principal): boolean {
  const a = tool.route.access;
  if (a === 'public' || a === 'authenticated') return true;
  if (a === 'admin') return isAdmin(principal);
  return can(principal, a.permission);
}

/** A concrete request from a tool's arguments: the path filled in, the query string, the body. */
export function requestOf(tool: ToolDef, args: Record<string, unknown>): { method: string; url: string; body?: unknown } {
  let path = tool.route.path;
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    const place = tool.places[name];
    if (!place || value === undefined) continue;
    if (place === 'path') path = path.replace(`:${name}`, encodeURIComponent(String(value)));
    else if (place === 'query') for (const v of [value].flat()) query.append(name, typeof v === 'object' ? JSON.stringify(v) : String(v));
    else body[name] = value;
  }
  const qs = query.toString();
  const url = `${path}${qs ? `?${qs}` : ''}`;
  if (!tool.route.body) return { method: tool.route.method.toUpperCase(), url };
  return { method: tool.route.method.toUpperCase(), url, body: tool.nestedBody ? (args.body ?? {}) : body };
}
