/**
 * What the assistant does with a parsed message: look the operation up in the table, check the
 * caller's permission for it, ask for what is missing, plan it, then answer the plan: a read
 * that ran, or an action that waits for confirmation or runs at once, exactly as the intent's
 * `requires_confirmation` (from the same table) says.
 */
import type { ParseResult } from '../../lib/assistant/intent.ts';
import { OPERATION_TEXTS } from '../../lib/assistant/operation-texts.ts';
import { missingText, TEXTS } from '../../lib/assistant/texts.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { carryOutAction } from './actions.ts';
import type { BoundReviewSession, ReviewSessionBinder } from './binder.ts';
import type { ConfirmationFlow } from './confirmations.ts';
import { recordDecision } from './decisions.ts';
import { operationFor } from './operations/index.ts';
import { allows, permissionOf, type Operation, type Plan } from './operations/types.ts';
import type { Reply } from './reply.ts';
import type { EnvRef } from './resolve.ts';

export interface Dispatch {
  app: AppContext;
  binder?: ReviewSessionBinder;
  confirmations: ConfirmationFlow;
  principal: Principal;
  parsed: ParseResult;
  conversationId: string;
  envs: EnvRef[];
  session?: BoundReviewSession;
}

export async function decide(d: Dispatch): Promise<Reply> {
  const { intent, language: lang, missing } = d.parsed;
  const op = operationFor(intent);
  if (!op) return { state: 'needs_clarification', text: TEXTS.unknown[lang](), data: { intent: 'unknown' } };
  if (!allows(d.app, d.principal, op.access)) {
    const permission = permissionOf(op.access);
    await record(d, 'denied', { permission, reason: 'missing_permission' });
    return { state: 'denied', text: TEXTS.denied[lang](String(permission)), data: { permission } };
  }
  if (missing.length) return { state: 'needs_clarification', text: missingText(lang, missing), data: { missing }, incomplete: true };
  const plan = await op.plan({ app: d.app, principal: d.principal, envs: d.envs, session: d.session }, d.parsed);
  return answer(d, op, plan);
}

async function answer(d: Dispatch, op: Operation, plan: Plan): Promise<Reply> {
  const confirm = d.parsed.intent.requires_confirmation;
  switch (plan.kind) {
    case 'answered':
      return { state: 'answered', text: plan.text };
    case 'ask':
      return { state: 'needs_clarification', text: plan.text, data: plan.data };
    case 'read':
      // Reported as waiting for confirmation, it must not have run: the table and the plan disagree.
      if (confirm) throw new Error(`assistant operation ${op.key} ran at once although it requires confirmation`);
      await record(d, 'executed', plan.outcome);
      return { state: 'executed', text: plan.text, data: plan.data };
    case 'act':
      return confirm ? d.confirmations.ask(d.principal, d.parsed, d.conversationId, plan) : runAtOnce(d, plan);
  }
}

/** An action that changes nothing (a dry run) starts now, as the direct route would. */
async function runAtOnce(d: Dispatch, plan: Extract<Plan, { kind: 'act' }>): Promise<Reply> {
  const outcome = await carryOutAction(d.app, d.binder, d.principal, plan.action);
  const lang = d.parsed.language;
  if (outcome.taskId === undefined) {
    await record(d, 'executed', { result: outcome.result });
    return { state: 'executed', text: plan.summary, data: { entities: plan.resolved, result: outcome.result } };
  }
  await record(d, 'executed', { task_id: outcome.taskId }, outcome.taskId);
  return {
    state: 'executed',
    text: OPERATION_TEXTS.started[lang](plan.summary, outcome.taskId),
    taskId: outcome.taskId,
    data: { entities: plan.resolved },
  };
}

function record(d: Dispatch, decision: 'executed' | 'denied', outcome: Record<string, unknown>, taskId?: string) {
  return recordDecision(d.app.stores.assistant.audit, d.principal, decision, d.parsed.intent, outcome, {
    conversationId: d.conversationId,
    ...(taskId ? { taskId } : {}),
  });
}
