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
      description: [
        "Checks every dashboard of the environment (or those given by `dashboard_ids`, `tag`, `owner`) with the migration's chart checks: each chart's query as its release's frontend sends it, run in that Superset; nothing is written there.",
        "The result lists each dashboard and chart with its verdict and time (`passed`, `broken` with Superset's own message, `not_verifiable` with the reason), when it was first seen broken and when it last passed; the task ends FAILED when a dashboard is broken or could not be checked.",
        '`browser: true` also opens each dashboard in headless Chromium. 404 for an unknown environment. Send `Idempotency-Key` to make retries safe.',
      ].join(' '),
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
