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
      description: [
        'Exports each dashboard from the environment and keeps its bundle in the backup store: the directory `BACKUP_DIR` (default `<SWITCHYARD_DATA_DIR>/backups`), or the S3-compatible bucket `BACKUP_S3_BUCKET` when configured.',
        'Content-addressed: a bundle is stored once under the sha256 of its normalized content (the export timestamp is ignored), so backing up an unchanged dashboard stores nothing new and only records an index entry (`deduplicated: true`).',
        'Each dashboard succeeds or fails on its own with its reason; the task result lists `{dashboard_id, title, status, backup_id, content_hash, deduplicated, error?}` per dashboard, and the task ends FAILED when any dashboard failed.',
        "Superset's row-level-security rules on the dashboard's datasets, which no export carries, are kept in the stored bundle as `row_level_security.yaml` (roles by name, tables by dataset uuid; `rls_rules` per dashboard says how many); failing to read them fails that dashboard (`step: rls`).",
        "Its companions (owners, dashboard roles, custom tags, alerts and reports, annotation layers, CSS templates, saved queries, certification, the theme and the embedded configuration; see the migration's `companions`) are kept beside them as `companions.yaml`, what Superset answered when they were read (`companions` per dashboard counts them); failing to read them fails that dashboard (`step: companions`).",
        'Afterwards the retention policy prunes the backed-up dashboards: `BACKUP_RETENTION_COUNT` newest backups kept per dashboard (default 10) and, when `BACKUP_RETENTION_DAYS` is set, none older (the newest one is always kept); a blob is deleted with the last backup that used it.',
        'Up to 10,000 dashboards in one task: it runs as a chain of Temporal workflow runs under the task id (continue-as-new after `TASK_ITEMS_PER_RUN` dashboards, default 100), each dashboard recorded as it is done, so progress, cancel and the result work as for a small one; each run prunes the dashboards it backed up.',
        '404 for an unknown environment; 400 for an empty or invalid `dashboard_ids`. Send `Idempotency-Key` to make retries safe.',
      ].join(' '),
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
      description: [
        'Imports the stored bundle with overwrite into the environment the backup was taken from: the dashboard gets the backed-up title, layout and settings back under its own UUID (a deleted dashboard is re-created with a new id, reported as `restored_dashboard_id`), and charts, datasets and databases it needs are re-created when they were deleted.',
        'Charts and datasets that still exist are left as they are, because other dashboards may share them.',
        'Row-level-security rules the backup kept are put back after the import: created or updated by name, tables on the restored datasets, roles by name (`rls.writes`); a role the environment no longer has fails the restore before anything is imported (`code: rls_role_missing`).',
        'Companions the backup kept are put back after the import by name, every kind copied (reports as they were, not paused), nothing the environment added since removed; the item lists them per kind (`companions`). A dashboard role the environment no longer has fails the restore before anything is imported (`code: companion_role_missing`).',
        "Before importing, the restore checks that nothing else in the environment would be taken over by Superset's import (a dashboard now holding the slug, another database with the same name, another dataset on the same table); such a look-alike fails the task with a next action instead of being overwritten.",
        "`target_env_id` defaults to the backup's environment and may only name it: restoring into another environment needs database mapping and collision handling, which is what `POST /api/dashboards/migrate` does (400 otherwise).",
        '404 for an unknown backup or environment.',
      ].join(' '),
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
        "Only `backup` and `llm_docs` tasks whose dashboards include `{id}`, newest first; with `env_id`, only tasks of that environment (404 when it does not exist). Migrations and restores are not part of this history: find them with `GET /api/tasks?dashboard_id=`. Callers without `tasks:READ` see only their own tasks. A row carries no items of the task's result (`items_omitted: true`, `items_total`, `items_url`), as in `GET /api/tasks`.",
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
