import { z, type ZodType } from 'zod';
import { ERROR_RESPONSES, type AnyRoute } from './routes.ts';

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[] };

function toSchema(schema: ZodType, io: 'input' | 'output'): JsonSchema {
  const s = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  delete s.$schema;
  return s;
}

function parameters(schema: ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const js = toSchema(schema, 'input');
  return Object.entries(js.properties ?? {}).map(([name, prop]) => ({
    name,
    in: where,
    required: where === 'path' || (js.required ?? []).includes(name),
    ...(typeof prop.description === 'string' ? { description: prop.description } : {}),
    schema: prop,
  }));
}

/** The multipart/form-data variant of a route's body: its text fields, plus its files as binary strings. */
function multipartContent(r: AnyRoute): Record<string, unknown> {
  if (!r.multipart) return {};
  const schema = toSchema(r.multipart.fields, 'input');
  const files = Object.entries(r.multipart.files);
  schema.properties = {
    ...(schema.properties ?? {}),
    ...Object.fromEntries(files.map(([name, f]) => [name, { type: 'string', format: 'binary', description: f.description }])),
  };
  const required = files.filter(([, f]) => f.required).map(([name]) => name);
  if (required.length) schema.required = [...(schema.required ?? []), ...required];
  return { 'multipart/form-data': { schema } };
}

/** OpenAPI 3.1, generated from the same route table that serves requests. */
export function buildOpenApi(routes: AnyRoute[], info: { version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][r.method] = operationOf(r, path);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard API',
      version: info.version,
      description:
        'Manage Apache Superset environments: listings, migrations, backups, dashboard repositories, releases. Long operations are Temporal workflows answered with `202 { task_id }`.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { apiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
      schemas: { Problem: PROBLEM_SCHEMA },
    },
  };
}

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: {
      type: 'string',
      description:
        'Stable machine word: validation_failed, not_found, forbidden, unauthenticated, version_conflict, upstream_unavailable, ...',
    },
    instance: { type: 'string' },
    request_id: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } } },
  },
};

/** One route's operation: who may call it, its parameters and body, its answers. */
function operationOf(r: AnyRoute, path: string) {
  const responses = responsesOf(r);
  return {
    tags: [r.tag],
    summary: r.summary,
    description: [r.description, `Access: ${accessText(r)}`].filter(Boolean).join('\n\n'),
    operationId: `${r.method}_${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
    parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
    ...(r.body
      ? {
          requestBody: {
            required: true,
            content: { [r.bodyType ?? 'application/json']: { schema: toSchema(r.body, 'input') }, ...multipartContent(r) },
          },
        }
      : {}),
    responses,
    ...(r.access === 'public' ? { security: [] } : {}),
  };
}

function accessText(r: AnyRoute): string {
  return r.access === 'public'
    ? 'Public.'
    : r.access === 'authenticated'
      ? 'Any signed-in caller.'
      : r.access === 'admin'
        ? 'Role `Admin` or scope `admin`.'
        : `Permission \`${r.access.permission}\`.`;
}

/** The route's own answers, then the ones every route may give (400; 401 and 403 unless public); every error a problem body. */
function responsesOf(r: AnyRoute): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(r.responses)) {
    const types = [spec.contentType ?? 'application/json'].flat();
    const media = spec.schema ? { schema: toSchema(spec.schema, 'output') } : {};
    responses[status] = {
      description: spec.description,
      ...(spec.schema || spec.contentType ? { content: Object.fromEntries(types.map((t) => [t, media])) } : {}),
    };
  }
  const implied = [400, ...(r.access === 'public' ? [] : [401, 403])];
  for (const status of implied) {
    if (!responses[status])
      responses[status] = {
        description: ERROR_RESPONSES[status],
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
  }
  for (const [status, value] of Object.entries(responses)) {
    const v = value as { content?: unknown; description: string };
    if (Number(status) >= 400 && !v.content)
      v.content = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  }
  return responses;
}

/**
 * A human docs page: Swagger UI served from the swagger-ui-dist package (no CDN; this runs
 * offline). It runs under the console's Content-Security-Policy, so Swagger UI is started by a
 * script file (DOCS_START_SCRIPT), not an inline script; the page names the document to load.
 */
export function docsPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchyard API</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css"></head>
<body><div id="ui" data-openapi-url="/api/openapi.json"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/assets/docs-start.js"></script>
</body></html>`;
}

/** Served as /api/docs/assets/docs-start.js: starts Swagger UI on the document the page names. */
export const DOCS_START_SCRIPT = `window.ui = SwaggerUIBundle({
  url: document.getElementById('ui').dataset.openapiUrl,
  dom_id: '#ui',
  deepLinking: true,
});
`;
