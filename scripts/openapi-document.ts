/**
 * Writes the API's OpenAPI document (`client/openapi.json`) from the route table, without a
 * database or a server: route factories only keep references to the context they are given, so
 * an inert stand-in is enough to read their declarations. The typed client (`client/schema.d.ts`,
 * openapi-typescript) is generated from it; test/platform/openapi-snapshot.test.ts fails when the
 * committed document no longer matches what the app serves.
 */
import fs from 'node:fs';
import path from 'node:path';
import { allRoutes, API_VERSION } from '../api/app.ts';
import type { AppContext } from '../api/context.ts';
import { buildOpenApi } from '../api/http/openapi.ts';
import { PROJECT_ROOT } from '../lib/config.ts';

/** Any property, any call, any construction: returns another inert stand-in. */
export function inert(): unknown {
  const target = function () {} as unknown as object;
  return new Proxy(target, {
    get: (_t, key) => (key === Symbol.toPrimitive ? () => '' : key === 'then' ? undefined : inert()),
    apply: () => inert(),
    construct: () => inert() as object,
  });
}

export function openApiDocument(): unknown {
  return buildOpenApi(allRoutes(inert() as AppContext), { version: API_VERSION });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = path.join(PROJECT_ROOT, 'client', 'openapi.json');
  fs.writeFileSync(out, JSON.stringify(openApiDocument(), null, 2) + '\n');
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
}
