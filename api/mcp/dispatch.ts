/**
 * Carrying out a tool call: the route's own request, injected into the same Koa app in-process
 * (light-my-request), so that the whole chain runs as for an HTTP caller: validation, the
 * access rule, the policies, idempotency, the problem mapper, request logs and metrics.
 *
 * The caller is the principal already resolved for the MCP request, handed over beside the
 * request object (a WeakMap keyed by it), never as a header: nothing a client sends can claim
 * to be an in-process call. The principal carries the MCP client's name, which the task log and
 * the audit name (`alice (API key 'ci') via MCP client 'claude-code'`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Context, Next } from 'koa';
import { inject } from 'light-my-request';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';

interface InProcessCall {
  principal: Principal;
}

const calls = new WeakMap<IncomingMessage, InProcessCall>();
const dispatchers = new WeakMap<AppContext, Dispatcher>();

export interface DispatchRequest {
  principal: Principal;
  method: string;
  url: string;
  body?: unknown;
  idempotencyKey?: string;
  /** The MCP caller's address, so request logs and security events show where the call came from. */
  remoteAddress?: string;
  userAgent?: string;
}

export interface DispatchAnswer {
  status: number;
  body: unknown;
  contentType: string;
}

export class Dispatcher {
  private readonly koa: Koa;
  private handler?: (req: IncomingMessage, res: ServerResponse) => void;

  constructor(koa: Koa) {
    this.koa = koa;
  }

  async dispatch(r: DispatchRequest): Promise<DispatchAnswer> {
    // Composed at the first call, once createApp has mounted every middleware.
    const handler = (this.handler ??= this.koa.callback() as (req: IncomingMessage, res: ServerResponse) => void);
    const res = await inject(
      (req, response) => {
        calls.set(req, { principal: r.principal });
        handler(req, response);
      },
      {
        method: r.method as 'GET',
        url: r.url,
        remoteAddress: r.remoteAddress ?? '127.0.0.1',
        headers: {
          'user-agent': r.userAgent ?? 'switchyard-mcp',
          ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(r.idempotencyKey ? { 'idempotency-key': r.idempotencyKey } : {}),
        },
        ...(r.body !== undefined ? { payload: JSON.stringify(r.body) } : {}),
      },
    );
    const contentType = String(res.headers['content-type'] ?? '');
    const body = /json/.test(contentType) && res.payload ? (JSON.parse(res.payload) as unknown) : res.payload;
    return { status: res.statusCode, body, contentType };
  }
}

/** The app's dispatcher (made by createApp); the assistant's confirmations carry out MCP calls through it. */
export function attachDispatcher(app: AppContext, koa: Koa): Dispatcher {
  const d = new Dispatcher(koa);
  dispatchers.set(app, d);
  return d;
}

export function dispatcherOf(app: AppContext): Dispatcher {
  const d = dispatchers.get(app);
  if (!d) throw new Error('no MCP dispatcher: createApp attaches one');
  return d;
}

/** After `authenticate`: an in-process call's caller is the principal it was handed, not a header. */
export function inProcessCaller() {
  return async (ctx: Context, next: Next): Promise<void> => {
    const call = calls.get(ctx.req);
    if (call) ctx.state.resolvePrincipal = async () => (ctx.state.principal = call.principal);
    await next();
  };
}
