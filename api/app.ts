import { createRequire } from 'node:module';
import path from 'node:path';
import fs from 'node:fs';
import Router from '@koa/router';
import Koa from 'koa';
import { Writable } from 'node:stream';
import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { apiKeyRoutes } from './admin/api-keys.routes.ts';
import { assistantRoutes } from './assistant/routes.ts';
import { groupMappingRoutes } from './admin/group-mappings.routes.ts';
import { llmProviderRoutes } from './admin/llm-providers.routes.ts';
import { roleRoutes } from './admin/roles.routes.ts';
import { securityEventRoutes } from './admin/security-events.routes.ts';
import { userRoutes } from './admin/users.routes.ts';
import { oidcRoutes } from './auth/oidc-routes.ts';
import { authRoutes } from './auth/routes.ts';
import { backupRoutes } from './backups/routes.ts';
import { cleanReleaseRoutes } from './clean-release/routes.ts';
import { authenticate } from './auth/service.ts';
import { dashboardRoutes } from './dashboards/routes.ts';
import { datasetRoutes } from './datasets/routes.ts';
import { datasetReviewRoutes } from './dataset-review/routes.ts';
import { dbMappingRoutes } from './db-mappings/routes.ts';
import { envRuleRoutes } from './env-rules/routes.ts';
import { environmentRoutes } from './environments/routes.ts';
import type { AppContext } from './context.ts';
import { gitRoutes } from './git/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { impactRoutes } from './impact/routes.ts';
import { clientAddress } from './http/client-address.ts';
import { rejectUnstorableText } from './http/input-text.ts';
import { httpMetrics } from './http/metrics.ts';
import { methodGuard } from './http/methods.ts';
import { httpTracing } from './http/tracing.ts';
import { buildOpenApi, DOCS_START_SCRIPT, docsPage } from './http/openapi.ts';
import { problemMiddleware } from './http/problem.ts';
import { requestContext } from './http/request-context.ts';
import { mountRoutes, type AnyRoute } from './http/routes.ts';
import { attachDispatcher, inProcessCaller } from './mcp/dispatch.ts';
import { McpEndpoint } from './mcp/endpoint.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { deriveTools } from './mcp/tools.ts';
import { CONTENT_SECURITY_POLICY, webConsole } from './http/web-console.ts';
import { reportRoutes } from './reports/routes.ts';
import { scheduleRoutes } from './schedules/routes.ts';
import { validationRoutes } from './validation/routes.ts';
import { migrationRoutes } from './dashboard-migration/routes.ts';
import { profileRoutes } from './profile/routes.ts';
import { approvalRoutes } from './tasks/approval.routes.ts';
import { taskItemRoutes } from './tasks/items.routes.ts';
import { screenshotRoutes } from './tasks/screenshots.routes.ts';
import { taskRoutes } from './tasks/routes.ts';

const require = createRequire(import.meta.url);
export const API_VERSION = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

export function allRoutes(app: AppContext): AnyRoute[] {
  return [
    ...healthRoutes(app),
    ...authRoutes(app),
    ...oidcRoutes(app),
    ...userRoutes(app),
    ...roleRoutes(app),
    ...groupMappingRoutes(app),
    ...apiKeyRoutes(app),
    ...securityEventRoutes(app),
    ...llmProviderRoutes(app),
    ...backupRoutes(app),
    ...reportRoutes(app),
    ...environmentRoutes(app),
    ...dbMappingRoutes(app),
    ...envRuleRoutes(app),
    ...dashboardRoutes(app),
    ...datasetRoutes(app),
    ...impactRoutes(app),
    ...datasetReviewRoutes(app),
    ...profileRoutes(app),
    ...migrationRoutes(app),
    ...taskRoutes(app),
    ...approvalRoutes(app),
    ...taskItemRoutes(app),
    ...screenshotRoutes(app),
    ...gitRoutes(app),
    ...cleanReleaseRoutes(app),
    ...assistantRoutes(app),
    ...scheduleRoutes(app),
    ...validationRoutes(app),
    ...mcpRoutes(app),
  ];
}

export function createApp(ctx: AppContext): Koa {
  const app = new Koa({ proxy: false });
  const routes = allRoutes(ctx);
  const openapi = buildOpenApi(routes, { version: API_VERSION });
  const router = new Router();

  router.get('/api/openapi.json', (c) => {
    c.body = openapi;
  });
  router.get('/api/docs', (c) => {
    c.type = 'html';
    c.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    c.body = docsPage();
  });
  const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  router.get('/api/docs/assets/:file', (c) => {
    const file = c.params.file;
    if (file === 'docs-start.js') {
      c.type = 'js';
      c.body = DOCS_START_SCRIPT;
      return;
    }
    if (!/^swagger-ui(-bundle)?\.(js|css)$/.test(file)) return;
    c.type = path.extname(file);
    c.set('Cache-Control', 'public, max-age=86400');
    c.body = fs.createReadStream(path.join(swaggerDir, file));
  });
  mountRoutes(router, routes);

  app.use(clientAddress(ctx.config.TRUSTED_PROXIES));
  app.use(requestContext(ctx.logger));
  app.use(httpMetrics());
  app.use(httpTracing());
  app.use(problemMiddleware(ctx.logger));
  app.use(async (c, next) => {
    c.set('X-Content-Type-Options', 'nosniff');
    c.set('Cache-Control', c.get('Cache-Control') || 'no-store');
    await next();
  });
  // The MCP endpoint reads its own body (before the parsers) and calls routes in-process through this app.
  app.use(new McpEndpoint(ctx, deriveTools(routes), attachDispatcher(ctx, app)).middleware());
  app.use(webConsole({ oidc: !!ctx.config.OIDC_ISSUER }));
  app.use(methodGuard(router));
  app.use(bodyParsers(routes));
  app.use(rejectUnstorableText());
  app.use(authenticate(ctx.auth));
  app.use(inProcessCaller());
  app.use(router.routes());
  return app;
}

/**
 * JSON and forms everywhere; multipart/form-data only on the routes that declare it, with small
 * limits: one file, held in memory (never written to disk), a few short text fields.
 */
function bodyParsers(routes: AnyRoute[]): Middleware {
  const onError = (err: Error) => {
    // formidable reports its limits as `httpCode` (413 for a file too large).
    const e = err as Error & { status?: number; httpCode?: number };
    throw Object.assign(err, {
      status: e.status ?? (e.httpCode && e.httpCode >= 400 && e.httpCode < 500 ? e.httpCode : 400),
      expose: true,
    });
  };
  const common = { json: true, urlencoded: true, jsonLimit: '2mb', formLimit: '64kb', onError };
  const plain = koaBody({ ...common, multipart: false });
  const withFiles = routes
    .filter((r) => r.multipart)
    .map((r) => ({
      method: r.method.toUpperCase(),
      path: new RegExp(`^${r.path.replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`),
      parser: koaBody({
        ...common,
        multipart: true,
        formidable: {
          maxFiles: 1,
          maxFileSize: r.multipart!.maxFileBytes,
          maxTotalFileSize: r.multipart!.maxFileBytes,
          maxFields: 20,
          maxFieldsSize: 64 * 1024,
          allowEmptyFiles: false,
          minFileSize: 1,
          fileWriteStreamHandler: (file?: unknown) => {
            const chunks: Buffer[] = [];
            return new Writable({
              write(chunk: Buffer, _enc, cb) {
                chunks.push(chunk);
                cb();
              },
              final(cb) {
                Object.assign(file as object, { buffer: Buffer.concat(chunks) });
                cb();
              },
            });
          },
        },
      }),
    }));
  // A provider's webhook is signed over its exact bytes: its route keeps them (api/git/review-routes.ts).
  const keepRaw = koaBody({ ...common, multipart: false, includeUnparsed: true });
  return (ctx, next) => {
    const route = withFiles.find((r) => r.method === ctx.method && r.path.test(ctx.path));
    if (!route && ctx.method === 'POST' && ctx.path.startsWith('/api/git/webhooks/')) return keepRaw(ctx, next);
    return (route?.parser ?? plain)(ctx, next);
  };
}
