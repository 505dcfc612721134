import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import {
  auditList,
  auditQuery,
  confirmAnswer,
  confirmationParams,
  conversationList,
  conversationListQuery,
  conversationParams,
  deleteAnswer,
  deleteQuery,
  historyAcrossList,
  historyQuery,
  messageAnswer,
  messageBody,
  messageList,
} from './schemas.ts';

const TAG = 'Assistant';
const USE = { permission: 'assistant:USE' } as const;

export function assistantRoutes(app: AppContext): AnyRoute[] {
  const { assistant } = app;
  return [
    defineRoute({
      method: 'post',
      path: '/api/assistant/messages',
      tag: TAG,
      summary: 'Send a command to the assistant (Russian or English)',
      description:
        'Parses the text deterministically into an intent and answers, runs a read-only operation, or asks for confirmation of a risky one; optionally bound to one of your dataset review sessions. Details: docs/assistant.md#post-apiassistantmessages.',
      access: USE,
      body: messageBody,
      responses: {
        200: { description: 'The answer', schema: messageAnswer },
        400: { description: 'Invalid body, or `unsupported_operation`' },
        403: { description: 'No `assistant:USE`, or an API key (the assistant answers people signed in)' },
        404: { description: "`conversation_id` is someone else's conversation, or the dataset review session is not yours or unknown" },
        503: { description: 'Superset or Temporal unavailable while answering (`upstream_unavailable`)' },
      },
      handler: (_ctx, { body, principal }) => assistant.message(principal, body),
    }),
    defineRoute({
      method: 'post',
      path: '/api/assistant/confirmations/:id/confirm',
      tag: TAG,
      summary: 'Confirm a risky command: starts its task',
      description:
        'Starts the task of a risky command its asker confirms (permissions checked again now); confirming again answers the same task. Details: docs/assistant.md#post-apiassistantconfirmationsidconfirm.',
      access: USE,
      params: confirmationParams,
      responses: {
        200: { description: 'Confirmed; the task started (or had started)', schema: confirmAnswer },
        400: { description: 'Invalid id, `confirmation_expired` or `confirmation_cancelled`' },
        403: { description: "Someone else's confirmation, or the caller no longer holds the permission" },
        404: { description: 'Unknown confirmation, or the dataset review session it writes is gone' },
        409: { description: 'A dataset review write whose session changed since it was asked (`version_conflict`, `current_version`)' },
      },
      handler: (_ctx, { params, principal }) => assistant.confirm(principal, params.id),
    }),
    defineRoute({
      method: 'post',
      path: '/api/assistant/confirmations/:id/cancel',
      tag: TAG,
      summary: 'Cancel a risky command',
      description:
        'Only the user who asked may cancel (403 otherwise). Cancelling twice is harmless; 409 `confirmation_decided` when it was already confirmed, 400 `confirmation_expired` when it expired.',
      access: USE,
      params: confirmationParams,
      responses: {
        200: { description: 'Cancelled; nothing was started', schema: confirmAnswer },
        400: { description: 'Invalid id or `confirmation_expired`' },
        403: { description: "Someone else's confirmation" },
        404: { description: 'Unknown confirmation' },
        409: { description: 'Already confirmed (`confirmation_decided`)' },
      },
      handler: (_ctx, { params, principal }) => assistant.cancel(principal, params.id),
    }),
    defineRoute({
      method: 'get',
      path: '/api/assistant/conversations',
      tag: TAG,
      summary: 'Your conversations, latest activity first',
      description:
        'One item per conversation, with its archived flag, last-message preview and message count. `archived` filters by the flag.',
      access: USE,
      query: conversationListQuery,
      responses: { 200: { description: 'A page of conversations', schema: conversationList }, 400: { description: 'Bad pagination' } },
      handler: (_ctx, { query, principal }) => assistant.listConversations(principal, query.page, query.page_size, query.archived),
    }),
    defineRoute({
      method: 'get',
      path: '/api/assistant/conversations/:conversation_id/messages',
      tag: TAG,
      summary: "A conversation's messages, oldest first",
      access: USE,
      params: conversationParams,
      query: historyQuery,
      responses: {
        200: { description: 'A page of messages', schema: messageList },
        400: { description: 'Bad id or pagination' },
        404: { description: "Unknown, or someone else's, conversation" },
      },
      handler: (_ctx, { params, query, principal }) => assistant.history(principal, params.conversation_id, query.page, query.page_size),
    }),
    defineRoute({
      method: 'get',
      path: '/api/assistant/history',
      tag: TAG,
      summary: 'Your messages across all your conversations, newest first',
      description:
        "Every message of every conversation of yours (archived ones included), newest first and paged; never another person's. Details: docs/assistant.md#get-apiassistanthistory.",
      access: USE,
      query: historyQuery,
      responses: { 200: { description: 'A page of messages', schema: historyAcrossList }, 400: { description: 'Bad pagination' } },
      handler: (_ctx, { query, principal }) => assistant.historyAcross(principal, query.page, query.page_size),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/assistant/conversations/:conversation_id',
      tag: TAG,
      summary: 'Archive (default) or delete one of your conversations',
      description:
        '`hard=true` deletes the conversation and its messages; otherwise it is archived (a new message makes it active again). Either way a command waiting in it for a reply is forgotten.',
      access: USE,
      params: conversationParams,
      query: deleteQuery,
      responses: {
        200: { description: 'Archived or deleted', schema: deleteAnswer },
        400: { description: 'Bad id' },
        404: { description: "Unknown, or someone else's, conversation" },
      },
      handler: (_ctx, { params, query, principal }) => assistant.deleteConversation(principal, params.conversation_id, query.hard ?? false),
    }),
    defineRoute({
      method: 'get',
      path: '/api/assistant/audit',
      tag: TAG,
      summary: 'Your assistant decisions, newest first',
      description:
        "Every decision (`executed`, `confirmed`, `cancelled`, `expired`, `denied`) with the intent and its outcome (task id, result, missing permission). Requires `tasks:READ`; answers only the caller's own decisions.",
      access: { permission: 'tasks:READ' },
      query: auditQuery,
      responses: { 200: { description: 'A page of decisions', schema: auditList }, 400: { description: 'Bad pagination or decision' } },
      handler: (_ctx, { query, principal }) => assistant.auditLog(principal, query.page, query.page_size, query.decision),
    }),
  ];
}
