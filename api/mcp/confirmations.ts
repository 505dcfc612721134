/**
 * A risky tool call waits for a person: it becomes a confirmation of the assistant's model
 * (db/assistant/confirmations.ts, api/assistant/confirmations.ts), in a conversation of its own
 * for the person the caller acts for, so the console's assistant shows it and a person confirms
 * it there, with `switchyard mcp confirm`, or through the assistant's confirm endpoint. The
 * assistant answers people signed in only, so an API key, the agent's own included, cannot
 * confirm; confirming runs the call as the person who confirmed (their permissions then).
 */
import { randomUUID } from 'node:crypto';
import type { McpCallAction } from '../../contracts/assistant.ts';
import { actorLabel, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';

export interface PendingConfirmation {
  status: 'awaiting_confirmation';
  confirmation_id: string;
  conversation_id: string;
  expires_at: string;
  summary: string;
  how_to_confirm: string;
  dry_run?: unknown;
}

const SUMMARY_CHARS = 400;

export function summaryOf(action: McpCallAction, principal: Principal, description: string): string {
  const body = action.body === undefined ? '' : ` ${JSON.stringify(action.body)}`;
  const text = `${actorLabel({ ...principal, agent: action.agent })} asks: ${description} (${action.method} ${action.url}${body})`;
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}

export async function askPerson(
  app: AppContext,
  principal: Principal,
  action: McpCallAction,
  description: string,
  dryRun?: unknown,
): Promise<PendingConfirmation> {
  const { assistant } = app.stores;
  const summary = summaryOf(action, principal, description);
  const conv = await assistant.conversations.open(undefined, principal.userId, `MCP: ${action.agent}: ${action.tool}`);
  const id = randomUUID();
  const intent = { domain: 'mcp', operation: action.tool, language: 'en', entities: {}, agent: action.agent };
  const { expires_at } = await assistant.confirmations.create(
    { id, user_id: principal.userId, username: principal.username, conversation_id: conv!.id, intent, summary, action },
    app.config.ASSISTANT_CONFIRMATION_TTL_SECONDS,
  );
  const how = `A person signed in as ${principal.username} confirms it in the console (Assistant, conversation "MCP: ${action.agent}: ${action.tool}"), with \`switchyard mcp confirm ${id}\`, or POST /api/assistant/confirmations/${id}/confirm; an API key cannot. Nothing runs before.`;
  await assistant.conversations.addMessage({
    conversationId: conv!.id,
    userId: principal.userId,
    role: 'assistant',
    text: `Confirm? ${summary}`,
    state: 'awaiting_confirmation',
    intent,
    data: { mcp: { tool: action.tool, agent: action.agent, ...(dryRun !== undefined ? { dry_run: dryRun } : {}) } },
    confirmationId: id,
  });
  return {
    status: 'awaiting_confirmation',
    confirmation_id: id,
    conversation_id: conv!.id,
    expires_at: expires_at.toISOString(),
    summary,
    how_to_confirm: how,
    ...(dryRun !== undefined ? { dry_run: dryRun } : {}),
  };
}
