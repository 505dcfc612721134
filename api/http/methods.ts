import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import { AppError } from '../../lib/errors.ts';

/**
 * One answer for a method a path does not serve: `405` with `Allow` and a problem body (any
 * method, TRACE included), and `OPTIONS` as browsers and proxies expect it: `204` with `Allow`.
 * A path no route serves stays a 404.
 */
export function methodGuard(router: Router) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const match = router.match(ctx.path, ctx.method);
    if (match.route) return next();
    const methods = new Set(match.path.flatMap((layer) => layer.methods));
    if (!methods.size) return next();
    methods.add('OPTIONS');
    const allow = [...methods].join(', ');
    ctx.set('Allow', allow);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw new AppError(405, 'method_not_allowed', 'Method not allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, {
      extra: { allow: [...methods] },
    });
  };
}
