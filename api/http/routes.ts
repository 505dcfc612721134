import Router from '@koa/router';
import type { Context } from 'koa';
import { z, type ZodType } from 'zod';
import { ForbiddenError, UnauthenticatedError, ValidationError } from '../../lib/errors.ts';
import type { Permission } from '../../contracts/permissions.ts';
import { can, isAdmin, type Principal } from '../auth/principal.ts';

/**
 * Every endpoint is declared once, as data: its schemas validate requests and also generate
 * the OpenAPI document, so the document cannot drift from what the code accepts.
 */
export type Access = 'public' | 'authenticated' | 'admin' | { permission: Permission };

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  schema?: ZodType;
  /** Media type(s) of the body (default JSON); several when the route answers any of them. */
  contentType?: string | string[];
}

/** A file of a multipart request, held in memory (uploads are small and capped; see app.ts). */
export interface UploadedFile {
  filename: string | null;
  mimetype: string | null;
  size: number;
  bytes: Buffer;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  /** Files of a multipart request, by field name (routes declaring `multipart` only). */
  files: Record<string, UploadedFile>;
}

/**
 * A route that also takes `multipart/form-data`: its text fields are validated with `fields`
 * (they arrive as strings), its files are handed over in memory. The same route keeps taking
 * JSON, validated with `body`.
 */
export interface MultipartSpec {
  fields: ZodType;
  files: Record<string, { description: string; required?: boolean }>;
  /** Largest file accepted, in bytes. */
  maxFileBytes: number;
}

export interface RouteDef<P extends ZodType, Q extends ZodType, B extends ZodType> {
  method: Method;
  /** Koa style (`/api/tasks/:task_id`); shown as `{task_id}` in OpenAPI. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  /** Content type of the body (default JSON). */
  bodyType?: 'application/json' | 'application/x-www-form-urlencoded';
  /** Also accept multipart/form-data with files (see MultipartSpec). */
  multipart?: MultipartSpec;
  /** 422 where the spec says so (profile preferences); 400 elsewhere. */
  validationStatus?: 400 | 422;
  responses: Record<number, ResponseSpec>;
  handler(ctx: Context, input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>): unknown;
}

// Type-erased form kept by the registry.
export type AnyRoute = RouteDef<ZodType, ZodType, ZodType>;

export const ERROR_RESPONSES: Record<number, string> = {
  400: 'Invalid request (problem body, code validation_failed)',
  401: 'Not authenticated',
  403: 'Not permitted',
  404: 'Not found',
  409: 'Conflict',
  422: 'Validation failed',
  503: 'An upstream service is unavailable',
};

export function defineRoute<
  P extends ZodType = ZodType<undefined>,
  Q extends ZodType = ZodType<undefined>,
  B extends ZodType = ZodType<undefined>,
>(def: RouteDef<P, Q, B>): AnyRoute {
  return def as unknown as AnyRoute;
}

function parse<T extends ZodType>(schema: T | undefined, value: unknown, where: string, status: 400 | 422): z.output<T> {
  if (!schema) return undefined as z.output<T>;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const errors = r.error.issues.map((i) => ({
    field: [where, ...i.path.map(String)].join('.'),
    message: i.message,
  }));
  throw new ValidationError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors, status);
}

export function authorize(access: Access, principal: Principal | undefined): asserts principal is Principal {
  if (access === 'public') return;
  if (!principal) throw new UnauthenticatedError();
  if (access === 'authenticated') return;
  if (access === 'admin') {
    if (!isAdmin(principal)) throw new ForbiddenError('This operation needs the Admin role or the admin scope');
    return;
  }
  if (!can(principal, access.permission)) throw new ForbiddenError(`This operation needs the permission ${access.permission}`);
}

/**
 * Routes most specific first, so that registration order never decides which route answers:
 * segment by segment, a literal (`/api/dashboards/backups`) comes before a parameter
 * (`/api/dashboards/:id`) at the same place. Koa's router tries routes in the order they were
 * mounted; the sort is stable, so routes that cannot shadow each other keep their order.
 */
export function bySpecificity<R extends Pick<AnyRoute, 'path'>>(routes: readonly R[]): R[] {
  const segments = (p: string) => p.split('/').filter(Boolean);
  const rank = (a: R, b: R): number => {
    const x = segments(a.path);
    const y = segments(b.path);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const px = x[i]!.startsWith(':');
      const py = y[i]!.startsWith(':');
      if (px !== py) return px ? 1 : -1;
      if (!px && x[i] !== y[i]) return 0; // different literals: the two never match the same path
    }
    return 0;
  };
  // Not Array.sort: `rank` is a partial order (0 for unrelated paths). A topological order that
  // takes, each time, the earliest registered route nothing left must precede.
  const left = [...routes];
  const out: R[] = [];
  while (left.length) {
    const next = left.findIndex((r) => !left.some((o) => o !== r && rank(o, r) < 0));
    out.push(...left.splice(next < 0 ? 0 : next, 1));
  }
  return out;
}

export function mountRoutes(router: Router, routes: AnyRoute[]): void {
  for (const route of bySpecificity(routes)) {
    router[route.method](route.path, async (ctx: Context) => {
      // A public route reads no credentials at all (see authenticate).
      const resolve = ctx.state.resolvePrincipal as (() => Promise<Principal | undefined>) | undefined;
      const principal = route.access === 'public' ? undefined : await resolve?.();
      authorize(route.access, principal);
      const status = route.validationStatus ?? 400;
      const multipart = route.multipart && ctx.is('multipart/form-data') ? route.multipart : undefined;
      const input = {
        params: parse(route.params, ctx.params, 'path', status),
        query: parse(route.query, ctx.query, 'query', status),
        body: parse(multipart ? multipart.fields : route.body, (ctx.request as { body?: unknown }).body ?? {}, 'body', status),
        principal: principal as Principal,
        files: multipart ? uploadedFiles(ctx, multipart) : {},
      };
      const result = await route.handler(ctx, input);
      if (result !== undefined && ctx.body === undefined) {
        ctx.status = Number(Object.keys(route.responses).find((s) => s.startsWith('2')) ?? 200);
        ctx.body = result;
      }
    });
  }
}

/** The request's files as koa-body and formidable left them (held in memory by app.ts), checked against the spec. */
function uploadedFiles(ctx: Context, spec: MultipartSpec): Record<string, UploadedFile> {
  const raw = ((ctx.request as { files?: Record<string, unknown> }).files ?? {}) as Record<string, unknown>;
  const out: Record<string, UploadedFile> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!(name in spec.files))
      throw new ValidationError(`unexpected file field '${name}'`, [
        { field: `body.${name}`, message: 'not a file field of this endpoint' },
      ]);
    if (Array.isArray(value))
      throw new ValidationError(`send one file in '${name}'`, [{ field: `body.${name}`, message: 'one file only' }]);
    const f = value as { originalFilename?: string | null; mimetype?: string | null; size?: number; buffer?: Buffer };
    const bytes = f.buffer ?? Buffer.alloc(0);
    out[name] = { filename: f.originalFilename ?? null, mimetype: f.mimetype ?? null, size: bytes.length, bytes };
  }
  for (const [name, f] of Object.entries(spec.files)) {
    if (f.required && !out[name])
      throw new ValidationError(`the file '${name}' is required`, [{ field: `body.${name}`, message: 'required' }]);
  }
  return out;
}
