/**
 * Confirmations of risky assistant commands. The row (db/assistant/confirmations.ts) is the one
 * decider of a confirmation's state, by the database's clock: confirming and cancelling move it
 * out of `pending` by a conditional update, and expiry is its `expires_at`. The confirmation
 * workflow is only its timer (see workflows/assistant-confirmation.ts): told once the row has
 * decided, it asks the row and ends. Confirming carries the action out once, under the
 * idempotency key `assistant-confirmation:<id>`, so confirming twice never starts two tasks.
 */
import { randomUUID } from 'node:crypto';
import {
  ASSISTANT_CONFIRMATION_WORKFLOW,
  confirmationWorkflowId,
  type AssistantConfirmationInput,
  type DatasetReviewAction,
} from '../../contracts/assistant.ts';
import { confirmationDecidedSignal } from '../../contracts/workflow-messages.ts';
import type { ConfirmationRow } from '../../db/assistant/confirmations.ts';
import type { Intent, Language, ParseResult } from '../../lib/assistant/intent.ts';
import { OPERATION_TEXTS } from '../../lib/assistant/operation-texts.ts';
import { TEXTS } from '../../lib/assistant/texts.ts';
import { AppError, ForbiddenError, NotFoundError, VersionConflictError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { carryOutAction, reviewBinder } from './actions.ts';
import type { ReviewSessionBinder } from './binder.ts';
import { recordDecision } from './decisions.ts';
import { assistantPolicy } from './policy.ts';
import { operationFor } from './operations/index.ts';
import { allows, anyone, permissionOf, type Plan } from './operations/types.ts';
import type { Reply } from './reply.ts';

const SIGNAL_TIMEOUT_MS = 5_000;

type StoredIntent = Intent & { language?: Language };
const languageOf = (row: ConfirmationRow): Language => ((row.intent as unknown as StoredIntent).language === 'en' ? 'en' : 'ru');

export interface ConfirmAnswer {
  confirmation_id: string;
  status: 'confirmed' | 'cancelled';
  task_id: string | null;
  text: string;
  data?: unknown;
}

export class ConfirmationFlow {
  private readonly app: AppContext;
  private readonly binder?: ReviewSessionBinder;

  constructor(app: AppContext, binder?: ReviewSessionBinder) {
    this.app = app;
    this.binder = binder;
  }

  private get rows() {
    return this.app.stores.assistant.confirmations;
  }

  /** Writes the confirmation (owner, summary, the planned action) and starts its timer; nothing runs. */
  async ask(principal: Principal, parsed: ParseResult, conversationId: string, plan: Extract<Plan, { kind: 'act' }>): Promise<Reply> {
    const id = randomUUID();
    const ttl = this.app.config.ASSISTANT_CONFIRMATION_TTL_SECONDS;
    const { summary, action } = plan;
    const { expires_at } = await this.rows.create(
      {
        id,
        user_id: principal.userId!,
        username: principal.username,
        conversation_id: conversationId,
        intent: { ...parsed.intent, language: parsed.language },
        summary,
        action,
      },
      ttl,
    );
    const expiresAt = expires_at.toISOString();
    const input: AssistantConfirmationInput = { confirmationId: id, expiresAt };
    try {
      await this.app.temporal.workflow.start(ASSISTANT_CONFIRMATION_WORKFLOW, {
        workflowId: confirmationWorkflowId(id),
        taskQueue: this.app.config.TEMPORAL_TASK_QUEUE,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        staticSummary: `Assistant confirmation for ${principal.username}: ${summary}`.slice(0, 400),
      });
    } catch (err) {
      // The row decides (its expiry is checked on every confirm); only the timer is missing.
      this.app.logger.warn({ err, confirmation_id: id }, 'assistant confirmation workflow did not start');
    }
    return {
      state: 'awaiting_confirmation',
      text: TEXTS.confirm[parsed.language](summary, Math.max(1, Math.round(ttl / 60)), id),
      confirmation: { id, expires_at: expiresAt, summary },
      data: { entities: plan.resolved },
    };
  }

  async confirm(principal: Principal, id: string): Promise<ConfirmAnswer> {
    const row = await this.owned(principal, id, 'confirm');
    if (row.status === 'confirmed') return this.carryOut(principal, row);
    if (row.status === 'cancelled') throw cancelledError(row);
    if (row.status === 'expired' || row.past_expiry) throw await this.expired(row);
    // The caller's permissions now, not when they asked.
    const access = operationFor(row.intent as unknown as Intent)?.access ?? anyone;
    if (!allows(this.app, principal, access)) {
      const permission = permissionOf(access);
      await recordDecision(
        this.app.stores.assistant.audit,
        principal,
        'denied',
        row.intent as unknown as Intent,
        {
          reason: 'missing_permission',
          permission,
        },
        { confirmationId: id },
      );
      throw new ForbiddenError(`Confirming needs the permission ${permission}`);
    }
    // A review write planned at a version the session has left changes nothing, and says so now.
    if (row.action.type === 'dataset_review') await this.currentReviewVersion(principal, row.action);
    const decided = await this.rows.decide(id, 'confirmed');
    if (!decided) {
      const now = (await this.rows.get(id))!;
      if (now.status === 'confirmed') return this.carryOut(principal, now);
      if (now.status === 'cancelled') throw cancelledError(now);
      throw await this.expired(now);
    }
    await this.tellTimer(id);
    return this.carryOut(principal, decided);
  }

  async cancel(principal: Principal, id: string): Promise<ConfirmAnswer & { status: 'cancelled'; task_id: null }> {
    const row = await this.owned(principal, id, 'cancel');
    const text = OPERATION_TEXTS.cancelled[languageOf(row)](row.summary);
    const answer = { confirmation_id: id, status: 'cancelled' as const, task_id: null, text };
    if (row.status === 'cancelled') return answer;
    if (row.status === 'confirmed')
      throw new AppError(
        409,
        'confirmation_decided',
        'Conflict',
        `Confirmation ${id} was already confirmed${row.task_id ? ` (task ${row.task_id})` : ''}`,
      );
    if (row.status === 'expired' || row.past_expiry) throw await this.expired(row);
    const decided = await this.rows.decide(id, 'cancelled', {
      userId: principal.userId,
      username: principal.username,
      intent: row.intent,
      outcome: { summary: row.summary },
      conversationId: row.conversation_id,
      confirmationId: id,
    });
    if (!decided) return this.cancel(principal, id);
    await this.tellTimer(id);
    await this.say(row, { text, state: 'answered', taskId: null });
    return answer;
  }

  /** Starts what was confirmed, once: the task under the confirmation's idempotency key, or the direct action. */
  private async carryOut(principal: Principal, row: ConfirmationRow): Promise<ConfirmAnswer> {
    const { action } = row;
    let taskId = row.task_id;
    let result: unknown = row.result ?? undefined;
    let first = false;
    if (action.type === 'dataset_review') throwIfStale(action, result);
    if (action.type === 'task' ? taskId === null : result === undefined) {
      const outcome = await this.carryOutOnce(principal, row);
      taskId = outcome.taskId ?? null;
      result = outcome.result;
      first = await this.rows.recordOutcome(row.id, outcome.taskId !== undefined ? { taskId: outcome.taskId } : { result });
    }
    const lang = languageOf(row);
    const version = action.type === 'dataset_review' ? (result as { version?: number } | undefined)?.version : undefined;
    const text =
      taskId !== null
        ? OPERATION_TEXTS.confirmedTask[lang](row.summary, taskId)
        : version !== undefined
          ? OPERATION_TEXTS.confirmedReview[lang](row.summary, version)
          : OPERATION_TEXTS.confirmed[lang](row.summary);
    if (first) {
      await recordDecision(
        this.app.stores.assistant.audit,
        principal,
        'confirmed',
        row.intent as unknown as Intent,
        { summary: row.summary, ...(taskId ? { task_id: taskId } : { result }) },
        { conversationId: row.conversation_id, confirmationId: row.id, taskId: taskId ?? undefined },
      );
      await this.say(row, { text, state: 'executed', taskId, data: result === undefined ? null : { result } });
    }
    return { confirmation_id: row.id, status: 'confirmed', task_id: taskId, text, ...(result !== undefined ? { data: result } : {}) };
  }

  /** The action; a review write refused as stale is recorded, so confirming again answers the same 409. */
  private async carryOutOnce(principal: Principal, row: ConfirmationRow) {
    try {
      return await carryOutAction(this.app, this.binder, principal, row.action, `assistant-confirmation:${row.id}`);
    } catch (err) {
      if (row.action.type === 'dataset_review' && err instanceof VersionConflictError)
        await this.rows.recordOutcome(row.id, { result: { error: 'version_conflict', current_version: err.extra?.current_version } });
      throw err;
    }
  }

  /** The confirmation's outcome in its conversation, when the conversation still exists. */
  private async say(row: ConfirmationRow, m: { text: string; state: string; taskId: string | null; data?: unknown }) {
    if (!row.conversation_id) return;
    const conv = await this.app.stores.assistant.conversations.get(row.conversation_id);
    if (!conv) return;
    await this.app.stores.assistant.conversations.addMessage({
      conversationId: conv.id,
      userId: conv.user_id,
      role: 'assistant',
      text: m.text,
      state: m.state,
      intent: row.intent,
      ...(m.data !== undefined ? { data: m.data } : {}),
      confirmationId: row.id,
      taskId: m.taskId,
    });
  }

  private async owned(principal: Principal, id: string, verb: 'confirm' | 'cancel') {
    const row = await this.rows.get(id);
    if (!row) throw new NotFoundError('Confirmation', id);
    if (!assistantPolicy.decide(principal, row)) {
      await recordDecision(
        this.app.stores.assistant.audit,
        principal,
        'denied',
        row.intent as unknown as Intent,
        {
          reason: 'not_owner',
          verb,
        },
        { confirmationId: id },
      );
      throw new ForbiddenError(`Only the user who asked may ${verb} this confirmation`);
    }
    return row;
  }

  /** A pending row past its time becomes expired (audited once, by whoever notices first); the error to answer. */
  private async expired(row: ConfirmationRow): Promise<AppError> {
    await this.rows.expire(row.id);
    return new AppError(
      400,
      'confirmation_expired',
      'Confirmation expired',
      `Confirmation ${row.id} expired at ${new Date(row.expires_at).toISOString()}; nothing was started. Send the command again.`,
    );
  }

  /** The bound session still at the version the confirmation carries (404 when it is gone or not the caller's, 409 when it moved). */
  private async currentReviewVersion(principal: Principal, action: DatasetReviewAction) {
    const s = await reviewBinder(this.binder).load(action.sessionId, principal);
    if (!s) throw new NotFoundError('Dataset review session', action.sessionId);
    if (s.version !== action.version)
      throw new VersionConflictError(`Dataset review session ${action.sessionId}`, action.version, s.version);
  }

  /** The row has decided: the timer need not wait any longer (if it cannot be told, it asks the row when it fires). */
  private async tellTimer(id: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const handle = this.app.temporal.workflow.getHandle(confirmationWorkflowId(id));
      await Promise.race([
        handle.signal(confirmationDecidedSignal),
        new Promise((resolve) => (timer = setTimeout(resolve, SIGNAL_TIMEOUT_MS))),
      ]);
    } catch (err) {
      this.app.logger.debug({ err, confirmation_id: id }, 'confirmation timer not told; it asks the row when it fires');
    } finally {
      clearTimeout(timer);
    }
  }
}

function cancelledError(row: ConfirmationRow) {
  return new AppError(
    400,
    'confirmation_cancelled',
    'Confirmation cancelled',
    `Confirmation ${row.id} was cancelled; nothing was started.`,
  );
}

/** A review write already refused as stale answers the same 409 again. */
function throwIfStale(action: DatasetReviewAction, result: unknown): void {
  const stale = result as { error?: string; current_version?: number } | undefined;
  if (stale?.error === 'version_conflict')
    throw new VersionConflictError(`Dataset review session ${action.sessionId}`, action.version, stale.current_version ?? action.version);
}
