import { z } from 'zod';
import { pagination, queryBoolean } from '../http/schemas.ts';

export const STATES = ['answered', 'needs_clarification', 'awaiting_confirmation', 'denied', 'executed'] as const;
export type AnswerState = (typeof STATES)[number];
export const DECISIONS = ['executed', 'confirmed', 'cancelled', 'expired', 'denied'] as const;

const uuid = (what: string) => z.uuid({ error: `${what} must be a UUID` });

export const messageBody = z
  .object({
    text: z.string({ error: 'text is required' }).trim().min(1, 'text is required').max(2000, 'at most 2000 characters'),
    conversation_id: uuid('conversation_id')
      .optional()
      .describe('continue this conversation (yours); a new UUID starts one with that id; omitted: a new one'),
    dataset_review_session_id: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "bind the message to one of your own dataset review sessions (someone else's or an unknown one: 404); review commands (show the session, a field's meaning, approve mappings, answer the question) work on it",
      ),
  })
  .strict();

export const intentView = z.object({
  domain: z.enum(['help', 'dashboards', 'datasets', 'tasks', 'git', 'dataset_review', 'unknown']),
  operation: z.string(),
  entities: z
    .record(z.string(), z.unknown())
    .describe(
      'as read from the text (environment names, ids, titles, slugs, a search text, a message); `data.entities` holds them resolved (environment ids, dashboard ids and titles) once the operation ran or waits for confirmation',
    ),
  confidence: z.number().min(0).max(1),
  risk_level: z.enum(['safe', 'low', 'medium', 'high']),
  requires_confirmation: z.boolean(),
});

export const confirmationView = z.object({
  id: z.string(),
  expires_at: z.string(),
  summary: z.string().describe('what will happen, to which objects, where'),
});

export const messageAnswer = z.object({
  conversation_id: z.string(),
  message_id: z.string().describe("the assistant's reply in the conversation history"),
  state: z.enum(STATES),
  intent: intentView,
  text: z.string(),
  confirmation: confirmationView.optional(),
  task_id: z.string().optional(),
  data: z.unknown().optional(),
});

export const confirmationParams = z.object({ id: uuid('id').describe('confirmation id') });

export const confirmAnswer = z.object({
  confirmation_id: z.string(),
  status: z.enum(['confirmed', 'cancelled']),
  task_id: z.string().nullable().optional(),
  text: z.string(),
  data: z.unknown().optional(),
});

export const conversationParams = z.object({ conversation_id: uuid('conversation_id') });

export const conversationListQuery = z.object({
  ...pagination,
  archived: queryBoolean.optional().describe('only archived (true) or only active (false) conversations; omitted: both'),
});

export const conversationList = z.object({
  items: z.array(
    z.object({
      conversation_id: z.string(),
      title: z.string().nullable(),
      archived: z.boolean(),
      last_message_preview: z.string().nullable(),
      message_count: z.number().int(),
      created_at: z.string(),
      last_activity_at: z.string(),
    }),
  ),
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
  has_next: z.boolean(),
});

export const historyQuery = z.object({ ...pagination });

export const messageList = z.object({
  conversation_id: z.string(),
  archived: z.boolean(),
  items: z.array(
    z.object({
      message_id: z.string(),
      role: z.enum(['user', 'assistant']),
      text: z.string(),
      state: z.string().nullable(),
      intent: z.unknown().nullable(),
      data: z.unknown().nullable(),
      confirmation_id: z.string().nullable(),
      task_id: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
  has_next: z.boolean(),
});

const messageItem = messageList.shape.items.element;

export const historyAcrossList = z.object({
  items: z.array(
    messageItem.extend({
      conversation_id: z.string().describe('the conversation the message belongs to'),
      conversation_archived: z.boolean().describe('whether that conversation is archived'),
    }),
  ),
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
  has_next: z.boolean(),
});

export const deleteQuery = z.object({
  hard: queryBoolean.optional().describe('true: delete the conversation and its messages; default: archive it'),
});

export const deleteAnswer = z.object({ conversation_id: z.string(), deleted: z.enum(['archived', 'hard']) });

export const auditQuery = z.object({ ...pagination, decision: z.enum(DECISIONS).optional() });

export const auditList = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      decision: z.enum(DECISIONS),
      domain: z.string(),
      operation: z.string(),
      intent: z.unknown(),
      outcome: z.unknown(),
      conversation_id: z.string().nullable(),
      confirmation_id: z.string().nullable(),
      task_id: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
  has_next: z.boolean(),
});
