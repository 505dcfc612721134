import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { can, personalUserId } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { acceptTask, taskAccess } from '../tasks/routes.ts';
import { LIST_ITEMS_LIMIT } from '../../contracts/task-answer.ts';
import { taskAccepted, taskList, toTaskView } from '../tasks/schemas.ts';
import { backupInput } from './input.ts';
import {
  backupBody,
  backupIdParams,
  backupList,
  backupListQuery,
  backupView,
  dashboardParams,
  dashboardTasksQuery,
  restoreBody,
  toBackupView,
} from './schemas.ts';

/** Task types `GET /api/dashboards/{id}/tasks` shows: the spec's "backup and llm tasks". */
export const DASHBOARD_HISTORY_TYPES = ['backup', 'llm_docs'] as const;

/**
 * Backups, restores and a dashboard's task history. Registered before the dashboards routes
 * (`/api/dashboards/:id`), so these more specific paths win.
 */
export function backupRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/dashboards/backup',
      tag: 'Backups',
      summary: 'Back up dashboards (a task)',
      description:
        'Exports each dashboard of the environment into the content-addressed backup store, with its row-level-security rules and companions, then applies the retention policy; each dashboard succeeds or fails on its own. Details: docs/backups-and-reports.md#post-apidashboardsbackup.',
      access: taskAccess('backup'),
      body: backupBody,
      responses: {
        202: { description: 'Backup task accepted', schema: taskAccepted },
        400: { description: 'Invalid body (empty or invalid `dashboard_ids`)' },
        404: { description: 'Unknown environment' },
      },
      async handler(ctx, { body, principal }) {
        await app.stores.environments.get(body.env_id);
        await acceptTask(ctx, app, {
          kind: 'backup',
          ...backupInput(body),
          owner: principal,
        });
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/dashboards/backups/:backup_id',
      tag: 'Backups',
      summary: 'Get one backup',
      access: { permission: 'dashboards:READ' },
      params: backupIdParams,
      responses: { 200: { description: 'The backup', schema: backupView }, 404: { description: 'Unknown backup' } },
      async handler(_ctx, { params }) {
        const backup = await app.stores.backups.get(params.backup_id);
        if (!backup) throw new NotFoundError('Backup', params.backup_id);
        return toBackupView(backup);
      },
    }),

    defineRoute({
      method: 'post',
      path: '/api/dashboards/backups/:backup_id/restore',
      tag: 'Backups',
      summary: 'Restore a backup (a task)',
      description:
        'Imports the stored bundle with overwrite into the environment the backup was taken from, then puts back its row-level-security rules and companions; a look-alike that the import would take over fails the task instead. Details: docs/backups-and-reports.md#post-apidashboardsbackupsbackup_idrestore.',
      access: taskAccess('restore'),
      params: backupIdParams,
      body: restoreBody,
      responses: {
        202: { description: 'Restore task accepted', schema: taskAccepted },
        400: { description: "Invalid body, or a target environment other than the backup's" },
        404: { description: 'Unknown backup or environment' },
      },
      async handler(ctx, { params, body, principal }) {
        const backup = await app.stores.backups.get(params.backup_id);
        if (!backup) throw new NotFoundError('Backup', params.backup_id);
        const envId = body.target_env_id ?? backup.env_id;
        await app.stores.environments.get(envId, body.target_env_id ? 'Environment (target_env_id)' : "Backup's environment");
        if (envId !== backup.env_id) {
          throw new ValidationError(
            `backup ${backup.id} was taken from environment ${backup.env_id}; restoring into another environment is not supported (it needs database mapping and collision handling: migrate the dashboard from its source environment with POST /api/dashboards/migrate instead)`,
            [{ field: 'body.target_env_id', message: `must be the backup's environment ${backup.env_id}` }],
          );
        }
        await acceptTask(ctx, app, {
          kind: 'restore',
          input: { backupId: backup.id, envId, dashboardId: backup.dashboard_id },
          params: { backup_id: backup.id, target_env_id: envId },
          owner: principal,
        });
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/dashboards/:id/backups',
      tag: 'Backups',
      summary: "A dashboard's backups",
      description:
        'Newest first (`created_at` desc, then `id` desc, so pages never overlap). `{id}` is the Superset dashboard id in `env_id`, which is required. 404 for an unknown environment.',
      access: { permission: 'dashboards:READ' },
      params: dashboardParams,
      query: backupListQuery,
      responses: { 200: { description: 'A page of backups', schema: backupList }, 404: { description: 'Unknown environment' } },
      async handler(_ctx, { params, query }) {
        await app.stores.environments.get(query.env_id);
        const page = await app.stores.backups.list({ envId: query.env_id, dashboardId: params.id }, query.page, query.page_size);
        return { ...page, items: page.items.map(toBackupView) };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/dashboards/:id/tasks',
      tag: 'Backups',
      summary: "A dashboard's backup and documentation tasks",
      description:
        'The `backup` and `llm_docs` tasks whose dashboards include `{id}`, newest first, without their items. Details: docs/backups-and-reports.md#get-apidashboardsidtasks.',
      access: 'authenticated',
      params: dashboardParams,
      query: dashboardTasksQuery,
      responses: { 200: { description: 'A page of tasks', schema: taskList }, 404: { description: 'Unknown environment' } },
      async handler(_ctx, { params, query, principal }) {
        if (query.env_id) await app.stores.environments.get(query.env_id);
        // An API key without tasks:READ sees no task (it acts for its creator, but reads only what it holds).
        if (!can(principal, 'tasks:READ') && personalUserId(principal) === null) {
          return { items: [], total: 0, page: query.page, page_size: query.page_size, has_next: false };
        }
        const page = await app.tasks.list(
          { types: DASHBOARD_HISTORY_TYPES, dashboardId: String(params.id), envId: query.env_id },
          query.page,
          query.page_size,
          principal,
        );
        return { ...page, items: page.items.map((t) => toTaskView(t, app.tasks.temporalUiUrl(t.id), LIST_ITEMS_LIMIT)) };
      },
    }),
  ];
}
