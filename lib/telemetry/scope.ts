/**
 * What the code running now works for: the request (its id) and the task (its id, its
 * environments). Log lines (lib/logger.ts) and trace spans (./tracing.ts) read it, so neither has
 * to be handed the ids at every call. Set by the API's request middleware and the worker's
 * activity interceptor (worker/telemetry.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';

export interface Scope {
  requestId?: string;
  taskId?: string;
  environmentIds?: string[];
}

const storage = new AsyncLocalStorage<Scope>();

export function currentScope(): Scope | undefined {
  return storage.getStore();
}

/** Runs `fn` with `scope` added to the current one. */
export function runInScope<T>(scope: Scope, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...scope }, fn);
}

/**
 * A request created a task: its later log lines (the access line included) and its span carry
 * the task's id and environments.
 */
export function noteTask(taskId: string, environmentIds: string[]): void {
  const scope = storage.getStore();
  if (scope) Object.assign(scope, { taskId, environmentIds });
  trace.getActiveSpan()?.setAttributes(spanAttributes({ taskId, environmentIds }));
}

/** The span attributes of a scope (names under `switchyard.`; see docs/observability.md). */
export function spanAttributes(scope: Scope): Record<string, string | string[]> {
  return {
    ...(scope.taskId ? { 'switchyard.task_id': scope.taskId } : {}),
    ...(scope.environmentIds?.length ? { 'switchyard.environment_ids': scope.environmentIds } : {}),
  };
}

/**
 * The environment ids named in a task's or an activity's input: its top-level `sourceEnvId`,
 * `targetEnvId`, `envId`, `envIds` (and their snake_case forms). Inputs name environments so.
 */
export function environmentIdsOf(input: unknown): string[] {
  if (!input || typeof input !== 'object') return [];
  const ids = new Set<string>();
  for (const [k, v] of Object.entries(input)) {
    if (!/^(source|target)?_?env(ironment)?_?ids?$/i.test(k)) continue;
    for (const id of Array.isArray(v) ? v : [v]) if (typeof id === 'string' && id.length <= 100) ids.add(id);
  }
  return [...ids];
}
