/**
 * The assistant: a second way in to what the other routes do. A message is parsed
 * (lib/assistant/parser.ts) and answered by the dispatcher (dispatch.ts) from the operation table
 * (operations/): the caller's own permissions, names resolved against what the caller can see,
 * read-only operations run at once through the same services as their routes, risky ones become a
 * confirmation (confirmations.ts). Conversations keep the messages, and a command waiting for its
 * missing part on the user's message, so the next message completes it on any API process.
 */
import type { AuditDecision } from '../../db/assistant/audit.ts';
import type { MessageRow } from '../../db/assistant/conversations.ts';
import type { Intent } from '../../lib/assistant/intent.ts';
import { parseCommand } from '../../lib/assistant/parser.ts';
import { TEXTS } from '../../lib/assistant/texts.ts';
import { AppError, NotFoundError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { Answer, Assistant } from './assistant.ts';
import type { BoundReviewSession, ReviewSessionBinder } from './binder.ts';
import { ConfirmationFlow } from './confirmations.ts';
import { decide } from './dispatch.ts';
import { assistantPolicy } from './policy.ts';
import type { Reply } from './reply.ts';
import { Clarification, type EnvRef } from './resolve.ts';

export type { Answer } from './assistant.ts';

/** How long a command that asked for a missing part waits for the reply that completes it. */
const FOLLOW_UP_SECONDS = 10 * 60;

type MessageBody = { text: string; conversation_id?: string; dataset_review_session_id?: string };

const page = <T>(items: T[], total: number, pageNo: number, pageSize: number) => ({
  items,
  total,
  page: pageNo,
  page_size: pageSize,
  has_next: pageNo * pageSize < total,
});

export class AssistantService implements Assistant {
  private readonly app: AppContext;
  private readonly binder?: ReviewSessionBinder;
  private readonly confirmations: ConfirmationFlow;

  constructor(app: AppContext, binder?: ReviewSessionBinder) {
    this.app = app;
    this.binder = binder;
    this.confirmations = new ConfirmationFlow(app, binder);
  }

  private get conversations() {
    return this.app.stores.assistant.conversations;
  }

  private async environments(): Promise<EnvRef[]> {
    const { rows } = await this.app.stores.environments.list(1, 1000);
    return rows.map((r) => ({ id: r.id, name: r.name }));
  }

  // ---- messages ---------------------------------------------------------------------------

  async message(principal: Principal, body: MessageBody): Promise<Answer> {
    const userId = assistantPolicy.user(principal);
    const session = await this.boundSession(principal, body);
    if (body.conversation_id) {
      const existing = await this.conversations.get(body.conversation_id);
      if (existing && !assistantPolicy.seeConversation(principal, existing)) throw new NotFoundError('Conversation', body.conversation_id);
    }
    const envs = await this.environments();
    const { parsed, text, pending } = await this.read(body, envs);
    // Refused before anything is stored: bad input changes nothing.
    if (parsed.intent.operation === 'unsupported') throw unsupported(parsed);
    const conv = await this.conversations.open(body.conversation_id, userId, body.text);
    if (!conv || !assistantPolicy.seeConversation(principal, conv)) throw new NotFoundError('Conversation', body.conversation_id);
    const asked = await this.conversations.addMessage({
      conversationId: conv.id,
      userId,
      role: 'user',
      text: body.text,
      intent: parsed.intent,
    });

    const reply = await this.reply({ principal, parsed, conversationId: conv.id, envs, session }, asked.id, pending);
    if (session) withSession(reply, session);
    // The next message, on whichever API process, completes what this one still lacks.
    if (reply.incomplete) await this.conversations.leavePending(asked.id, text);

    const msg = await this.conversations.addMessage({
      conversationId: conv.id,
      userId,
      role: 'assistant',
      text: reply.text,
      state: reply.state,
      intent: parsed.intent,
      data: reply.data,
      confirmationId: reply.confirmation?.id ?? null,
      taskId: reply.taskId ?? null,
    });
    return answerOf(conv.id, msg.id, parsed.intent, reply);
  }

  /**
   * The dispatcher's reply; a question it asks back (Clarification) is a reply too. Not answered
   * (Superset or Temporal down): the command that was waiting still waits, and the error stands.
   */
  private async reply(
    asked: Omit<Parameters<typeof decide>[0], 'app' | 'binder' | 'confirmations'>,
    askedId: string,
    pending: string | undefined,
  ): Promise<Reply> {
    try {
      return await decide({ app: this.app, binder: this.binder, confirmations: this.confirmations, ...asked });
    } catch (err) {
      if (!(err instanceof Clarification)) throw pending ? await this.conversations.leavePending(askedId, pending).then(() => err) : err;
      return { state: 'needs_clarification', text: err.message, data: err.data, incomplete: true };
    }
  }

  /** The caller's own dataset review session the message is bound to (404 for anyone else's or an unknown one). */
  private async boundSession(principal: Principal, body: MessageBody): Promise<BoundReviewSession | undefined> {
    if (!body.dataset_review_session_id) return undefined;
    const session = this.binder ? await this.binder.load(body.dataset_review_session_id, principal) : undefined;
    if (!session) throw new NotFoundError('Dataset review session', body.dataset_review_session_id);
    return session;
  }

  /** The message parsed; a reply to a question ("из dev в prod") completes the command that asked it. */
  private async read(body: MessageBody, envs: EnvRef[]) {
    const parsed = parseCommand(body.text, { environments: envs });
    const pending = body.conversation_id ? await this.conversations.pendingCommand(body.conversation_id, FOLLOW_UP_SECONDS) : undefined;
    if (pending && (parsed.intent.operation === 'unknown' || parsed.intent.domain === 'help')) {
      const text = `${pending} ${body.text}`;
      const combined = parseCommand(text, { environments: envs });
      if (combined.intent.operation !== 'unknown') return { parsed: combined, text, pending };
    }
    return { parsed, text: body.text, pending };
  }

  // ---- confirmations ----------------------------------------------------------------------

  async confirm(principal: Principal, id: string) {
    assistantPolicy.user(principal);
    return this.confirmations.confirm(principal, id);
  }

  async cancel(principal: Principal, id: string) {
    assistantPolicy.user(principal);
    return this.confirmations.cancel(principal, id);
  }

  // ---- conversations and audit ------------------------------------------------------------

  async listConversations(principal: Principal, pageNo: number, pageSize: number, archived?: boolean) {
    const { rows, total } = await this.conversations.list(assistantPolicy.mine(principal), pageNo, pageSize, archived);
    const items = rows.map((r) => ({
      conversation_id: r.id,
      title: r.title,
      archived: r.archived,
      last_message_preview: r.last_message_preview,
      message_count: Number(r.message_count),
      created_at: new Date(r.created_at).toISOString(),
      last_activity_at: new Date(r.last_activity_at).toISOString(),
    }));
    return page(items, total, pageNo, pageSize);
  }

  private async ownConversation(principal: Principal, id: string) {
    const conv = await this.conversations.get(id);
    // Someone else's conversation answers like an absent one.
    if (!conv || !assistantPolicy.seeConversation(principal, conv)) throw new NotFoundError('Conversation', id);
    return conv;
  }

  async history(principal: Principal, id: string, pageNo: number, pageSize: number) {
    const conv = await this.ownConversation(principal, id);
    const { rows, total } = await this.conversations.messages(id, pageNo, pageSize);
    return { conversation_id: id, archived: conv.archived, ...page(rows.map(messageOut), total, pageNo, pageSize) };
  }

  /** The caller's messages across all their conversations (archived ones too), newest first. */
  async historyAcross(principal: Principal, pageNo: number, pageSize: number) {
    const { rows, total } = await this.conversations.messagesAcross(assistantPolicy.mine(principal), pageNo, pageSize);
    const items = rows.map((m) => ({
      ...messageOut(m),
      conversation_id: m.conversation_id,
      conversation_archived: m.conversation_archived,
    }));
    return page(items, total, pageNo, pageSize);
  }

  /** Archives (the command waiting in it is forgotten) or deletes one of the caller's conversations. */
  async deleteConversation(principal: Principal, id: string, hard: boolean) {
    await this.ownConversation(principal, id);
    if (hard) await this.conversations.remove(id);
    else await this.conversations.archive(id);
    return { conversation_id: id, deleted: hard ? ('hard' as const) : ('archived' as const) };
  }

  async auditLog(principal: Principal, pageNo: number, pageSize: number, decision?: AuditDecision) {
    const { rows, total } = await this.app.stores.assistant.audit.list(assistantPolicy.mine(principal), pageNo, pageSize, decision);
    const items = rows.map((r) => ({
      id: r.id,
      decision: r.decision,
      domain: r.domain,
      operation: r.operation,
      intent: r.intent,
      outcome: r.outcome,
      conversation_id: r.conversation_id,
      confirmation_id: r.confirmation_id,
      task_id: r.task_id,
      created_at: new Date(r.created_at).toISOString(),
    }));
    return page(items, total, pageNo, pageSize);
  }
}

type Parsed = ReturnType<typeof parseCommand>;

function unsupported(parsed: Parsed): AppError {
  return new AppError(
    400,
    'unsupported_operation',
    'Unsupported operation',
    TEXTS.unsupported[parsed.language](parsed.intent.entities.verb ?? ''),
    {
      extra: { intent: parsed.intent },
    },
  );
}

/** A reply in a bound dataset review session says which session, at which version. */
function withSession(reply: Reply, session: BoundReviewSession): void {
  reply.data = {
    ...((reply.data as object | undefined) ?? {}),
    dataset_review_session: { id: session.id, version: session.version, ...session.metadata },
  };
}

function answerOf(conversationId: string, messageId: string, intent: Intent, reply: Reply): Answer {
  return {
    conversation_id: conversationId,
    message_id: messageId,
    state: reply.state,
    intent,
    text: reply.text,
    ...(reply.confirmation ? { confirmation: reply.confirmation } : {}),
    ...(reply.taskId ? { task_id: reply.taskId } : {}),
    ...(reply.data !== undefined ? { data: reply.data } : {}),
  };
}

function messageOut(m: MessageRow) {
  return {
    message_id: m.id,
    role: m.role,
    text: m.text,
    state: m.state,
    intent: m.intent,
    data: m.data ?? null,
    confirmation_id: m.confirmation_id,
    task_id: m.task_id,
    created_at: new Date(m.created_at).toISOString(),
  };
}
