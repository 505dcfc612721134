/**
 * An assistant operation: what it is (its key, the entities it requires, how risky it is: the
 * lib/assistant/operations.ts table the parser reports from), who may run it, and how it is
 * planned. A plan either ran a read (its answer), or says what it will do (an action and its
 * summary): the dispatcher then asks to confirm or runs it at once, as the table says.
 */
import type { PlannedAction } from '../../../contracts/assistant.ts';
import type { Permission } from '../../../contracts/permissions.ts';
import { TASK_KINDS, type TaskKind, type TaskKindName } from '../../../contracts/task-kinds.ts';
import type { ParseResult } from '../../../lib/assistant/intent.ts';
import { OPERATIONS, type OperationKey, type OperationSpec } from '../../../lib/assistant/operations.ts';
import { can, type Principal } from '../../auth/principal.ts';
import type { AppContext } from '../../context.ts';
import type { BoundReviewSession } from '../binder.ts';
import type { EnvRef } from '../resolve.ts';

export interface OperationContext {
  app: AppContext;
  principal: Principal;
  /** The environments the caller can see. */
  envs: EnvRef[];
  /** The dataset review session the message is bound to, if any. */
  session?: BoundReviewSession;
}

export type Plan =
  /** Said, nothing ran (help; no LLM provider configured). */
  | { kind: 'answered'; text: string }
  /** A question that does not keep the command for a reply (a review command outside a session). */
  | { kind: 'ask'; text: string; data: Record<string, unknown> }
  /** A read-only operation that ran: its answer, and what the audit records. */
  | { kind: 'read'; text: string; data: unknown; outcome: Record<string, unknown> }
  /** What will happen: the action, its summary, and the entities as resolved (environment ids, dashboards). */
  | { kind: 'act'; action: PlannedAction; summary: string; resolved: Record<string, unknown> };

/**
 * Who may run it: a task kind's own permission from the task-kind registry (never restated
 * here), a permission of the catalogue, or nothing beyond using the assistant.
 */
export type Access = { task: TaskKindName } | { permission: Permission } | { permission: null };

export const startsTask = (task: TaskKindName): Access => ({ task });
export const needs = (permission: Permission): Access => ({ permission });
export const anyone: Access = { permission: null };

/** The permission the access names, as a denial reports it. */
export function permissionOf(access: Access): TaskKind<never>['permission'] | null {
  return 'task' in access ? TASK_KINDS[access.task].permission : access.permission;
}

/** Whether the principal holds it now (a task kind: as the task service decides for its routes). */
export function allows(app: AppContext, principal: Principal, access: Access): boolean {
  if ('task' in access) return app.tasks.mayStart(access.task, principal);
  return access.permission === null || can(principal, access.permission);
}

export interface Operation<K extends OperationKey = OperationKey> {
  key: K;
  required: OperationSpec['required'];
  risk: OperationSpec['risk'];
  access: Access;
  plan(ctx: OperationContext, parsed: ParseResult): Promise<Plan>;
}

/** An operation of the table: what it is comes from lib/assistant/operations.ts by its key. */
export function defineOperation<K extends OperationKey>(key: K, how: Pick<Operation<K>, 'access' | 'plan'>): Operation<K> {
  const spec: OperationSpec = OPERATIONS[key];
  return { key, required: spec.required, risk: spec.risk, ...how };
}
