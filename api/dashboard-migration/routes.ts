import { ValidationError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { acceptTask, taskAccess } from '../tasks/routes.ts';
import { taskAccepted } from '../tasks/schemas.ts';
import { migrateBody, migrationInput } from './input.ts';

export { migrateBody };

export function migrationRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/dashboards/migrate',
      tag: 'Dashboards',
      summary: 'Migrate dashboards to another environment (a task)',
      description:
        'Exports each dashboard from the source, maps its databases, resolves collisions, imports it into the target with its row-level security and companions and verifies it; each dashboard succeeds or fails on its own. Details: docs/migrating-dashboards.md#post-apidashboardsmigrate.',
      access: taskAccess('migration'),
      body: migrateBody,
      responses: {
        202: { description: 'Migration task accepted', schema: taskAccepted },
        400: { description: 'Invalid body: empty `dashboard_ids`, the same environment twice, bad mappings (`validation_failed`)' },
        404: { description: 'An environment does not exist (an id that is not a UUID cannot exist either)' },
      },
      async handler(ctx, { body, principal }) {
        if (body.source_env_id === body.target_env_id) {
          throw new ValidationError('source and target environments must differ', [
            { field: 'body.target_env_id', message: 'must differ from source_env_id' },
          ]);
        }
        await app.stores.environments.get(body.source_env_id, 'Source environment');
        await app.stores.environments.get(body.target_env_id, 'Target environment');
        await acceptTask(ctx, app, {
          kind: 'migration',
          ...migrationInput(body),
          owner: principal,
        });
      },
    }),
  ];
}
