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
import { AssistantService } from './service.ts';

const TAG = 'Assistant';
const USE = { permission: 'assistant:USE' } as const;

export function assistantRoutes(app: AppContext): AnyRoute[] {
  // Built here, not in bootstrap.ts: it takes the whole context (every operation reaches other
  // services through it), and the context naming its type would close an import cycle.
  const assistant = new AssistantService(app, app.assistantReviewSessions);
  return [
    defineRoute({
      method: 'post',
      path: '/api/assistant/messages',
      tag: TAG,
      summary: 'Send a command to the assistant (Russian or English)',
      description: [
        'Parses the text deterministically (rules and a lexicon: Snowball stems for every case and number form, one-letter typos in keywords, Latin/Cyrillic look-alike letters, ё/е, quoted names, environment names and ids) into an intent with `domain`, `operation`, `entities`, `confidence`, `risk_level` and `requires_confirmation`.',
        "Operations: help; list and search dashboards and datasets in an environment; a task's status and logs; migrate dashboards between environments (with dry run); back up dashboards; generate dataset docs; git status, commit and deploy.",
        "States: `answered` (help), `executed` (a read-only operation ran, or a dry run started: `data`, `task_id`), `awaiting_confirmation` (a risky operation: `confirmation {id, expires_at, summary}`, nothing ran), `needs_clarification` (intent `unknown`, a missing parameter named in the question's language, or a name matching nothing or several things, with the candidates), `denied` (the caller lacks the permission the operation needs; nothing ran).",
        'Names are resolved against the environments and the Superset content the caller can see. A reply in the same conversation can complete a command that asked for a parameter. 400 `unsupported_operation` for an operation the assistant does not do (delete, restore, cancel, push...), before anything is stored.',
        '`dataset_review_session_id` binds the message to one of your own dataset review sessions (404 for anyone else\'s or an unknown one; its content is never read). Bound, the assistant shows the session (state, open question, unresolved fields; imported filter values masked as `***` everywhere it answers or stores) and plans its writes: a field\'s meaning ("поле region означает регион продаж", "set field region to Sales region"), approving the mappings, answering the current question; each waits for confirmation at the session `version` shown.',
      ].join(' '),
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
        "Only the user who asked may confirm (403 otherwise, audited as `denied`); that user's permissions are checked again now. Answers the started task's `task_id` (a git commit answers its result in `data`). Confirming again answers the same task: one confirmation never starts two tasks. 400 `confirmation_expired` after the confirmation's lifetime (`ASSISTANT_CONFIRMATION_TTL_SECONDS`, ten minutes by default; nothing is started), 400 `confirmation_cancelled` after a cancel. A dataset review write (a field's meaning, mapping approval, an answer) is made at the session `version` shown when it was asked: 409 `version_conflict` with `current_version` when the session changed since, and nothing changes; 404 when the session is gone.",
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
        "The caller's history: every message (yours and the assistant's answers) of every conversation of yours, archived ones included (a hard-deleted conversation's are gone), newest first, each naming its `conversation_id` and whether that conversation is archived. Paged with `page` and `page_size`; never another person's messages (an API key gets 403).",
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
