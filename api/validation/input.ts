/** The validate task input, built in one place for the HTTP route, the assistant and schedules. */
import type { TaskInputOf } from '../../contracts/task-kinds.ts';
import type { ValidationSelection } from '../../contracts/validation.ts';

export interface ValidateRequest extends ValidationSelection {
  browser?: boolean | undefined;
}

export function validateInput(envId: string, body: ValidateRequest): { input: TaskInputOf<'validate'>; params: Record<string, unknown> } {
  const selection: ValidationSelection = {
    ...(body.dashboard_ids?.length ? { dashboard_ids: body.dashboard_ids } : {}),
    ...(body.tag ? { tag: body.tag } : {}),
    ...(body.owner ? { owner: body.owner } : {}),
  };
  const browser = body.browser === true;
  return { input: { envId, selection, browser }, params: { env_id: envId, ...selection, ...(browser ? { browser } : {}) } };
}
