/**
 * Assistant conversations and their messages: the only code that reads or writes
 * `assistant_conversations` and `assistant_messages`. Who may read which is the API's policy
 * (`api/assistant/policy.ts`); the store takes plain filters.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

export interface ConversationRow {
  id: string;
  user_id: string;
  title: string | null;
  archived: boolean;
  last_message_preview: string | null;
  created_at: Date;
  last_activity_at: Date;
}

export interface MessageRow {
  id: string;
  seq: string;
  conversation_id: string;
  user_id: string;
  role: 'user' | 'assistant';
  text: string;
  state: string | null;
  intent: Record<string, unknown> | null;
  data: unknown;
  confirmation_id: string | null;
  task_id: string | null;
  /** On a user's message: the command it left waiting for its missing part (null: nothing waits). */
  pending_command: string | null;
  created_at: Date;
}

export interface NewMessage {
  conversationId: string;
  userId: string;
  role: 'user' | 'assistant';
  text: string;
  state?: string | null;
  intent?: unknown;
  data?: unknown;
  confirmationId?: string | null;
  taskId?: string | null;
}

const PREVIEW_CHARS = 200;

export class ConversationStore {
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
  }

  async get(id: string): Promise<ConversationRow | undefined> {
    return this.knex<ConversationRow>('assistant_conversations').where({ id }).first();
  }

  /** The conversation, created for the user when new; whoever owns it (the caller asks the policy). */
  async open(id: string | undefined, userId: string, title: string): Promise<ConversationRow | undefined> {
    const convId = id ?? randomUUID();
    await this.knex('assistant_conversations')
      .insert({ id: convId, user_id: userId, title: title.slice(0, PREVIEW_CHARS) })
      .onConflict('id')
      .ignore();
    return this.get(convId);
  }

  /** Appends a message; the conversation's activity time and preview follow, and it is active again. */
  async addMessage(m: NewMessage): Promise<MessageRow> {
    return this.knex.transaction(async (trx) => {
      const [row] = await trx<MessageRow>('assistant_messages')
        .insert({
          id: randomUUID(),
          conversation_id: m.conversationId,
          user_id: m.userId,
          role: m.role,
          text: m.text,
          state: m.state ?? null,
          intent: m.intent === undefined ? null : (JSON.stringify(m.intent) as never),
          data: m.data === undefined ? null : (JSON.stringify(m.data) as never),
          confirmation_id: m.confirmationId ?? null,
          task_id: m.taskId ?? null,
        })
        .returning('*');
      await trx('assistant_conversations')
        .where({ id: m.conversationId })
        .update({ last_activity_at: trx.fn.now(), last_message_preview: m.text.slice(0, PREVIEW_CHARS), archived: false });
      return row as MessageRow;
    });
  }

  /** The conversations matching `filter`, latest activity first. */
  async list(filter: { user_id: string }, page: number, pageSize: number, archived?: boolean) {
    const base = () => {
      const q = this.knex<ConversationRow>('assistant_conversations').where(filter);
      if (archived !== undefined) void q.andWhere({ archived });
      return q;
    };
    const [rows, count] = await Promise.all([
      base()
        .select('assistant_conversations.*')
        .select(
          this.knex.raw(
            '(select count(*)::int from assistant_messages m where m.conversation_id = assistant_conversations.id) as message_count',
          ),
        )
        .orderBy([
          { column: 'last_activity_at', order: 'desc' },
          { column: 'id', order: 'asc' },
        ])
        .offset((page - 1) * pageSize)
        .limit(pageSize),
      base().count<{ count: string }[]>('* as count'),
    ]);
    return { rows: rows as Array<ConversationRow & { message_count: number }>, total: Number(count[0]?.count ?? 0) };
  }

  /** A conversation's messages in the order they were written. */
  async messages(conversationId: string, page: number, pageSize: number) {
    const base = () => this.knex<MessageRow>('assistant_messages').where({ conversation_id: conversationId });
    const [rows, count] = await Promise.all([
      base()
        .orderBy('seq', 'asc')
        .offset((page - 1) * pageSize)
        .limit(pageSize),
      base().count<{ count: string }[]>('* as count'),
    ]);
    return { rows: rows as MessageRow[], total: Number(count[0]?.count ?? 0) };
  }

  /**
   * The messages of every conversation matching `filter` (archived ones too), newest first, each
   * with its conversation's id and archived flag: a person's history across conversations.
   */
  async messagesAcross(filter: { user_id: string }, page: number, pageSize: number) {
    const base = () =>
      this.knex<MessageRow>('assistant_messages as m')
        .join('assistant_conversations as c', 'c.id', 'm.conversation_id')
        .where({ 'c.user_id': filter.user_id });
    const [rows, count] = await Promise.all([
      base()
        .select('m.*', 'c.archived as conversation_archived')
        .orderBy('m.seq', 'desc')
        .offset((page - 1) * pageSize)
        .limit(pageSize),
      base().count<{ count: string }[]>('* as count'),
    ]);
    return { rows: rows as Array<MessageRow & { conversation_archived: boolean }>, total: Number(count[0]?.count ?? 0) };
  }

  /** What the user's message left waiting for a reply (null: its answer asked for nothing). */
  async leavePending(messageId: string, command: string | null): Promise<void> {
    await this.knex('assistant_messages').where({ id: messageId, role: 'user' }).update({ pending_command: command });
  }

  /**
   * The command waiting for a reply in the conversation: the one the user's latest message left,
   * while it is younger than `maxAgeSeconds` by the database's clock (the same for every API
   * process).
   */
  async pendingCommand(conversationId: string, maxAgeSeconds: number): Promise<string | undefined> {
    const last = await this.knex<MessageRow>('assistant_messages')
      .where({ conversation_id: conversationId, role: 'user' })
      .orderBy('seq', 'desc')
      .first('pending_command', this.knex.raw('created_at > now() - make_interval(secs => ?) as fresh', [maxAgeSeconds]));
    const row = last as { pending_command: string | null; fresh: boolean } | undefined;
    return row?.pending_command && row.fresh ? row.pending_command : undefined;
  }

  /** Archives the conversation and forgets the command waiting in it: the next message starts afresh. */
  async archive(id: string): Promise<void> {
    await this.knex.transaction(async (trx) => {
      await trx('assistant_conversations').where({ id }).update({ archived: true });
      await trx('assistant_messages').where({ conversation_id: id }).whereNotNull('pending_command').update({ pending_command: null });
    });
  }

  /** Deletes the conversation and its messages (confirmations keep their row, without the link). */
  async remove(id: string): Promise<void> {
    await this.knex('assistant_conversations').where({ id }).delete();
  }
}
