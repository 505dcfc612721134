import type { AppContext } from '../context.ts';
import { envIdParams } from '../environments/schemas.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { acceptTask, taskAccess } from '../tasks/routes.ts';
import { taskAccepted } from '../tasks/schemas.ts';
import { validateTask } from '../../contracts/validation.ts';
import { validateBody } from './schemas.ts';

/** The content validator: one environment's dashboards checked as a task (docs/validation.md). */
export function validationRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/environments/:env_id/validate',
      tag: 'Validation',
      summary: "Validate an environment's dashboards (a task)",
      description:
        "Runs every chart query of the environment's dashboards (or a selection) as its release's frontend sends it, writing nothing, and lists each dashboard and chart with its verdict. Details: docs/validation.md#post-apienvironmentsenv_idvalidate.",
      access: taskAccess('validate'),
      params: envIdParams,
      body: validateBody,
      responses: {
        202: { description: 'Validation task accepted', schema: taskAccepted },
        400: { description: 'Invalid body' },
        404: { description: 'Unknown environment' },
      },
      async handler(ctx, { params, body, principal }) {
        await app.stores.environments.get(params.env_id);
        await acceptTask(ctx, app, { kind: 'validate', ...validateTask(params.env_id, body), owner: principal });
      },
    }),
  ];
}
