/**
 * The MCP endpoint in the route table (so the OpenAPI document and the fuzz test know it; the
 * endpoint middleware answers it before the router), and the state of an agent's pending
 * confirmation, which the agent polls as the tool `mcp_confirmations_get`.
 */
import { z } from 'zod';
import { NotFoundError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { MCP_PATH } from './endpoint.ts';

const TAG = 'MCP';

const jsonRpcMessage = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string().optional().describe('initialize, tools/list, tools/call, resources/list, resources/read, ...'),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough()
  .describe('A JSON-RPC 2.0 message of the Model Context Protocol (or a batch of them)');
const jsonRpcError = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).nullable(),
  error: z.object({ code: z.number(), message: z.string() }),
});
const rpc = (description: string) => ({ description, schema: jsonRpcError, contentType: 'application/json' });

const confirmationState = z.object({
  confirmation_id: z.string(),
  status: z.enum(['pending', 'confirmed', 'cancelled', 'expired']),
  summary: z.string(),
  expires_at: z.string(),
  decided_at: z.string().nullable(),
  task_id: z.string().nullable(),
});

/** Thrown if the router is ever reached for /mcp: the endpoint middleware answers it first. */
const answeredByEndpoint = (): never => {
  throw new Error('/mcp is answered by the MCP endpoint middleware');
};

function transportRoutes(): AnyRoute[] {
  const common = {
    path: MCP_PATH,
    tag: TAG,
    access: 'authenticated' as const,
    handler: answeredByEndpoint,
  };
  return [
    defineRoute({
      ...common,
      method: 'post',
      summary: 'Model Context Protocol (Streamable HTTP): send a JSON-RPC message',
      description:
        "The MCP server (see docs/mcp.md): tools derived from this API, under the caller's permissions. `initialize` opens a session (`Mcp-Session-Id` answer header); later messages send it back. Accept `application/json, text/event-stream`.",
      body: jsonRpcMessage,
      responses: {
        200: { description: 'JSON-RPC answer, or an event stream of them', contentType: ['application/json', 'text/event-stream'] },
        202: { description: 'A notification or response accepted' },
        400: rpc("Malformed JSON-RPC, or no session (the protocol's error)"),
        401: rpc('No or bad credentials (with a bearer challenge)'),
        404: rpc("Unknown session, or another caller's"),
        406: rpc('Accept lacks application/json or text/event-stream'),
        415: rpc('Not application/json'),
      },
    }),
    defineRoute({
      ...common,
      method: 'get',
      summary: "Model Context Protocol: the session's server-sent event stream",
      responses: {
        200: { description: 'Event stream', contentType: 'text/event-stream' },
        400: rpc('No session'),
        401: rpc('No or bad credentials'),
        404: rpc('Unknown session'),
        405: rpc('Not offered'),
        406: rpc('Accept lacks text/event-stream'),
        409: rpc('A stream is already open'),
      },
    }),
    defineRoute({
      ...common,
      method: 'delete',
      summary: 'Model Context Protocol: end the session',
      responses: { 200: { description: 'Ended' }, 400: rpc('No session'), 401: rpc('No or bad credentials'), 404: rpc('Unknown session') },
    }),
  ];
}

export function mcpRoutes(app: AppContext): AnyRoute[] {
  return [
    ...transportRoutes(),
    defineRoute({
      method: 'get',
      path: '/api/mcp/confirmations/:confirmation_id',
      tag: TAG,
      summary: "An agent's pending confirmation: whether a person confirmed it, and the task it started",
      description:
        "The person the caller acts for only (their API keys included): anyone else's, or a confirmation that is not an MCP call's, is 404.",
      access: 'authenticated',
      params: z.object({ confirmation_id: z.uuid({ error: 'confirmation_id must be a UUID' }) }),
      responses: { 200: { description: 'The confirmation', schema: confirmationState }, 404: { description: 'Unknown, or not yours' } },
      async handler(_ctx, { params, principal }) {
        const row = await app.stores.assistant.confirmations.get(params.confirmation_id);
        if (!row || row.user_id !== principal.userId || row.action.type !== 'mcp_call')
          throw new NotFoundError('Confirmation', params.confirmation_id);
        const expired = row.status === 'pending' && row.past_expiry;
        return {
          confirmation_id: row.id,
          status: expired ? 'expired' : row.status,
          summary: row.summary,
          expires_at: new Date(row.expires_at).toISOString(),
          decided_at: row.decided_at ? new Date(row.decided_at).toISOString() : null,
          task_id: row.task_id,
        };
      },
    }),
  ];
}
