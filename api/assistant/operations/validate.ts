/** "проверь прод" / "validate prod": a validate task of the environment (or the dashboards named by id); it only reads, so it starts at once. */
import { validateTask } from '../../../contracts/validation.ts';
import type { ParseResult } from '../../../lib/assistant/intent.ts';
import { VALIDATE_TEXTS } from '../../../lib/assistant/validate-texts.ts';
import { validateBody } from '../../validation/schemas.ts';
import { Clarification, resolveEnvironment } from '../resolve.ts';
import { requestBody } from './support.ts';
import { defineOperation, startsTask, type OperationContext, type Plan } from './types.ts';

async function validate({ envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  const where = resolveEnvironment(lang, e.environment!, envs);
  const named = e.dashboards ?? [];
  const ids = named.filter((d): d is number => typeof d === 'number');
  if (ids.length !== named.length) throw new Clarification(VALIDATE_TEXTS.notIds[lang](), { invalid: 'dashboards' });
  const body = requestBody(lang, validateBody, ids.length ? { dashboard_ids: ids } : {});
  const { input, params } = validateTask(where.id, body);
  return {
    kind: 'act',
    action: { type: 'task', kind: 'validate', input, params },
    summary: VALIDATE_TEXTS.started[lang](where.name, ids),
    resolved: { ...e, environment: where },
  };
}

export const dashboardsValidate = defineOperation('dashboards.validate', { access: startsTask('validate'), plan: validate });
