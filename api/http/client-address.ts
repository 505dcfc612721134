import type { Context, Next } from 'koa';
import proxyaddr from 'proxy-addr';

/**
 * The caller's address for throttling and security events: the socket peer, or, when the peer
 * is a configured trusted proxy, the nearest untrusted address in X-Forwarded-For. Anyone else's
 * X-Forwarded-For is ignored, so nobody can forge an address and one proxy does not lock out
 * everyone behind it.
 */
export function clientAddress(trustedProxies: readonly string[]) {
  const trust = proxyaddr.compile([...trustedProxies]);
  return async (ctx: Context, next: Next): Promise<void> => {
    ctx.request.ip = proxyaddr(ctx.req, trust);
    await next();
  };
}
