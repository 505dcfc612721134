/**
 * `/mcp`: the Streamable HTTP transport of the official SDK, one session (server and transport)
 * per client, kept in this API process. Every request is authenticated as the REST API's are
 * (bearer token or X-API-Key); a session answers only the caller that opened it, anyone else is
 * told it does not exist. Mounted before the body parsers: the transport reads the body itself,
 * so malformed JSON-RPC gets the protocol's own errors.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Context, Next } from 'koa';
import { AppError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { Dispatcher } from './dispatch.ts';
import { RateLimiter } from './limits.ts';
import { createMcpServer, type Caller } from './server.ts';
import type { ToolDef } from './tools.ts';

export const MCP_PATH = '/mcp';
const MAX_SESSIONS = 500;
const MAX_SESSIONS_PER_CALLER = 10;
const IDLE_MS = 60 * 60_000;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  owner: string;
  seen: number;
}

/** Whose session: the person, and the key when one is used (a person's new token keeps their sessions). */
const ownerOf = (p: Principal) => `${p.kind}:${p.userId}:${p.apiKeyId ?? ''}`;

/** A JSON-RPC error answer outside any session (the body the SDK's transport gives its own refusals). */
function rpcError(ctx: Context, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = { jsonrpc: '2.0', error: { code, message }, id: null };
}

export class McpEndpoint {
  private readonly sessions = new Map<string, Session>();
  private readonly app: AppContext;
  private readonly deps: { tools: ToolDef[]; dispatcher: Dispatcher; limiter: RateLimiter };

  constructor(app: AppContext, tools: ToolDef[], dispatcher: Dispatcher) {
    this.app = app;
    this.deps = { tools, dispatcher, limiter: new RateLimiter() };
  }

  middleware() {
    return async (ctx: Context, next: Next): Promise<void> => {
      // Other methods fall through to the method guard (405 with Allow, OPTIONS 204), as on every path.
      if (ctx.path !== MCP_PATH || !['GET', 'POST', 'DELETE'].includes(ctx.method)) return next();
      const principal = await this.authenticate(ctx);
      if (!principal) return;
      const id = ctx.get('mcp-session-id');
      const session = id ? this.sessions.get(id) : undefined;
      if (id && (!session || session.owner !== ownerOf(principal))) return rpcError(ctx, 404, -32001, 'Session not found');
      if (!id && ctx.method !== 'POST') return rpcError(ctx, 400, -32000, 'Bad Request: no session; initialize first');
      const s = session ?? (await this.open(principal));
      s.seen = Date.now();
      const caller: Caller = { principal, ctx };
      const auth: AuthInfo = { token: '', clientId: principal.apiKeyId ?? principal.userId, scopes: [], extra: { caller } };
      ctx.respond = false;
      await s.transport.handleRequest(Object.assign(ctx.req as IncomingMessage, { auth }), ctx.res);
      // A POST that did not initialize a session leaves no session behind.
      if (!session && !s.transport.sessionId) await s.server.close();
    };
  }

  /** The caller, or undefined after answering 401 with the protocol's bearer challenge. */
  private async authenticate(ctx: Context): Promise<Principal | undefined> {
    let principal: Principal | undefined;
    let detail = 'Authentication is required: a bearer token (Authorization) or an API key (X-API-Key)';
    try {
      principal = await this.app.auth.resolve(ctx);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 401) throw err;
      detail = err.message;
    }
    if (principal) return principal;
    ctx.set('WWW-Authenticate', `Bearer realm="switchyard", error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`);
    rpcError(ctx, 401, -32001, `Unauthorized: ${detail}`);
    return undefined;
  }

  private async open(principal: Principal): Promise<Session> {
    this.evict(ownerOf(principal));
    const server = createMcpServer({ app: this.app, ...this.deps });
    const session: Session = {
      server,
      owner: ownerOf(principal),
      seen: Date.now(),
      transport: undefined as unknown as StreamableHTTPServerTransport,
    };
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        this.sessions.set(sid, session);
      },
      onsessionclosed: (sid) => {
        this.sessions.delete(sid);
      },
    });
    session.transport.onclose = () => {
      if (session.transport.sessionId) this.sessions.delete(session.transport.sessionId);
    };
    session.transport.onerror = (err) => this.app.logger.debug({ err }, 'MCP transport error');
    await server.connect(session.transport);
    return session;
  }

  /** Bounded sessions: idle ones go, then the caller's and everyone's least recently seen beyond the limits. */
  private evict(owner: string): void {
    const now = Date.now();
    const close = (sid: string, s: Session) => {
      this.sessions.delete(sid);
      void s.server.close().catch((err: unknown) => this.app.logger.debug({ err }, 'MCP session close failed'));
    };
    for (const [sid, s] of this.sessions) if (now - s.seen > IDLE_MS) close(sid, s);
    const oldest = (list: Array<[string, Session]>) => list.sort((a, b) => a[1].seen - b[1].seen)[0]!;
    let mine = [...this.sessions].filter(([, s]) => s.owner === owner);
    while (mine.length >= MAX_SESSIONS_PER_CALLER) {
      close(...oldest(mine));
      mine = [...this.sessions].filter(([, s]) => s.owner === owner);
    }
    while (this.sessions.size >= MAX_SESSIONS) close(...oldest([...this.sessions]));
  }

  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.server.close()));
  }
}
