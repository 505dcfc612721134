/**
 * `switchyard mcp`: the MCP server over stdio, for clients that start a command (Claude Desktop,
 * IDEs). It is a bridge, not a second server: every JSON-RPC message goes to the API's `/mcp`
 * (Streamable HTTP) with the stored login or SWITCHYARD_API_KEY / SWITCHYARD_TOKEN, and every answer
 * comes back, so tools, permissions, confirmations and the audit are the API's. stdout carries
 * the protocol only. `switchyard mcp confirm|cancel <id>` decide an agent's pending confirmation
 * as the person signed in (an API key cannot).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Command } from 'commander';
import { unwrap } from '../api.ts';
import { resolveConnection, type Connection } from '../config.ts';
import { act, type Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { print, say } from '../output.ts';

function headersOf(c: Connection): Record<string, string> {
  if (c.apiKey) return { 'X-API-Key': c.apiKey };
  if (c.token) return { Authorization: `Bearer ${c.token}` };
  return {};
}

/** Relays stdio <-> the API's /mcp until either side closes; a message the API refuses answers its request with the error. */
async function bridge(connection: Connection): Promise<number> {
  const url = new URL('/mcp', connection.url);
  const upstream = new StreamableHTTPClientTransport(url, { requestInit: { headers: headersOf(connection) } });
  const local = new StdioServerTransport();
  const closed = Promise.withResolvers<void>();
  const failRequest = async (message: JSONRPCMessage, err: unknown) => {
    say(`switchyard mcp: ${(err as Error).message}`);
    if ('id' in message && 'method' in message)
      await local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32001, message: `Switchyard API: ${(err as Error).message}` } });
  };
  local.onmessage = (message) => {
    upstream.send(message).catch((err: unknown) => failRequest(message, err).catch((e: unknown) => say(`switchyard mcp: ${String(e)}`)));
  };
  upstream.onmessage = (message) => {
    local.send(message).catch((err: unknown) => say(`switchyard mcp: ${String(err)}`));
  };
  upstream.onerror = (err) => say(`switchyard mcp: ${err.message}`);
  local.onclose = () => closed.resolve();
  upstream.onclose = () => closed.resolve();
  await upstream.start();
  await local.start();
  await closed.promise;
  await Promise.allSettled([upstream.terminateSession(), upstream.close(), local.close()]);
  return EXIT.OK;
}

export function mcpCommands(program: Command, ctx: () => Ctx): void {
  const mcp = program
    .command('mcp')
    .description("Serve Switchyard's MCP tools over stdio (for Claude Desktop, IDEs), through the API's /mcp")
    .action(act(() => bridge(resolveConnection())));
  mcp
    .command('confirm <confirmation_id>')
    .description("Confirm an agent's pending request (as the person signed in; an API key cannot)")
    .action(
      act(async (id: string) => {
        const c = ctx();
        const answer = await unwrap(c.api().client.POST('/api/assistant/confirmations/{id}/confirm', { params: { path: { id } } }));
        print(c.format, answer, () => answer.text);
        return EXIT.OK;
      }),
    );
  mcp
    .command('cancel <confirmation_id>')
    .description("Refuse an agent's pending request: nothing runs")
    .action(
      act(async (id: string) => {
        const c = ctx();
        const answer = await unwrap(c.api().client.POST('/api/assistant/confirmations/{id}/cancel', { params: { path: { id } } }));
        print(c.format, answer, () => answer.text);
        return EXIT.OK;
      }),
    );
}
