/**
 * Carrying out an agent's risky call once a person confirmed it (the assistant's confirmation
 * flow calls this): the same route request, in-process, as the person who confirmed, naming the
 * agent's client; a refusal comes back as the route's own problem.
 */
import type { McpCallAction } from '../../contracts/assistant.ts';
import { AppError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { dispatcherOf, type DispatchAnswer } from './dispatch.ts';

export async function carryOutMcpCall(
  app: AppContext,
  principal: Principal,
  action: McpCallAction,
  idempotencyKey?: string,
): Promise<{ taskId: string; result?: undefined } | { taskId?: undefined; result: unknown }> {
  const answer = await dispatcherOf(app).dispatch({
    principal: { ...principal, agent: action.agent },
    method: action.method,
    url: action.url,
    ...(action.body !== undefined ? { body: action.body } : {}),
    ...(idempotencyKey ? { idempotencyKey } : {}),
    userAgent: `switchyard-mcp (${action.agent})`,
  });
  if (answer.status >= 400) throw problemError(answer);
  const taskId = (answer.body as { task_id?: unknown } | null)?.task_id;
  return typeof taskId === 'string' ? { taskId } : { result: answer.body ?? null };
}

/** A route's problem answer as the error it was. */
export function problemError(answer: DispatchAnswer): AppError {
  const p = (typeof answer.body === 'object' && answer.body ? answer.body : {}) as { code?: string; title?: string; detail?: string };
  return new AppError(answer.status, p.code ?? 'request_failed', p.title ?? 'Request failed', p.detail ?? String(answer.body ?? ''));
}
