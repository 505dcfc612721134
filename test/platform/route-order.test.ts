import Router from '@koa/router';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../api/app.ts';
import type { AppContext } from '../../api/context.ts';
import { bySpecificity, mountRoutes, type AnyRoute } from '../../api/http/routes.ts';
import { inert } from '../../scripts/openapi-document.ts';

/** A concrete path for a route: each parameter replaced by a value no literal segment uses. */
const sample = (p: string) => p.replace(/:\w+/g, '7f3c');

/** Which route a real @koa/router tries first for each route's own sample path, mounted in this order. */
function firstMatches(routes: AnyRoute[]): Array<{ route: string; answeredBy: string }> {
  const router = new Router();
  mountRoutes(router, routes);
  return routes.map((r) => {
    const layers = router.match(sample(r.path), r.method.toUpperCase()).pathAndMethod;
    return { route: `${r.method} ${r.path}`, answeredBy: `${r.method} ${layers[0]?.path ?? '(none)'}` };
  });
}

describe('route order', () => {
  const routes = allRoutes(inert() as AppContext);

  it('every route answers its own paths: none is shadowed by a parameter route', () => {
    const shadowed = firstMatches(routes).filter((m) => m.route !== m.answeredBy);
    expect(shadowed).toEqual([]);
  });

  it('registration order does not matter: the routes reversed answer the same', () => {
    const shadowed = firstMatches([...routes].reverse()).filter((m) => m.route !== m.answeredBy);
    expect(shadowed).toEqual([]);
  });

  it('puts a literal segment before a parameter at the same place', () => {
    const order = bySpecificity([
      { path: '/api/x/:id' },
      { path: '/api/y' },
      { path: '/api/x/list' },
      { path: '/api/x/:id/a' },
      { path: '/api/x/list/a' },
    ]).map((r) => r.path);
    const at = (p: string) => order.indexOf(p);
    expect(at('/api/x/list')).toBeLessThan(at('/api/x/:id'));
    expect(at('/api/x/list/a')).toBeLessThan(at('/api/x/:id/a'));
    expect(at('/api/x/:id')).toBeLessThan(at('/api/x/:id/a')); // unrelated pairs keep their registration order
  });
});
