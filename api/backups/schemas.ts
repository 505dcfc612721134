import { z } from 'zod';
import type { BackupRow } from '../../db/backups/store.ts';
import { pageEnvelope, pagination, SUPERSET_ID_MAX } from '../http/schemas.ts';
import { MAX_DASHBOARDS_PER_TASK } from '../../contracts/tasks.ts';

const dashboardId = z.coerce
  .number({ error: 'must be a dashboard id (a positive integer)' })
  .int('must be a dashboard id (a positive integer)')
  .positive('must be a dashboard id (a positive integer)')
  .max(SUPERSET_ID_MAX, `must be a dashboard id (at most ${SUPERSET_ID_MAX})`);

export const backupBody = z
  .object({
    env_id: z.string({ error: 'env_id is required' }).trim().min(1, 'env_id is required').max(200),
    dashboard_ids: z
      .array(
        z
          .number({ error: 'must be a dashboard id (a positive integer)' })
          .int('must be a dashboard id (a positive integer)')
          .positive('must be a dashboard id (a positive integer)'),
        {
          error: 'dashboard_ids must be a list of dashboard ids',
        },
      )
      .min(1, 'dashboard_ids must not be empty')
      // One task runs any number as a chain of bounded workflow runs; the cap keeps one request sane.
      .max(MAX_DASHBOARDS_PER_TASK, `at most ${MAX_DASHBOARDS_PER_TASK} dashboards per backup task`)
      .transform((ids) => [...new Set(ids)]),
  })
  .strict();

export const restoreBody = z
  .object({
    target_env_id: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('the environment to restore into; default and only supported value: the one the backup was taken from'),
  })
  .strict();

export const dashboardParams = z.object({ id: dashboardId.describe('the Superset dashboard id in the environment') });
export const backupIdParams = z.object({ backup_id: z.string().min(1).max(100) });

export const backupListQuery = z.object({
  ...pagination,
  env_id: z.string({ error: 'env_id is required' }).trim().min(1, 'env_id is required').max(200),
});

export const dashboardTasksQuery = z.object({
  ...pagination,
  env_id: z.string().trim().min(1).max(200).optional(),
});

export const backupView = z.object({
  id: z.string(),
  backup_id: z.string(),
  env_id: z.string(),
  dashboard_id: z.number().int(),
  dashboard_uuid: z.string().nullable(),
  dashboard_title: z.string(),
  dashboard_slug: z.string().nullable(),
  content_hash: z.string().describe('sha256 of the normalized bundle; equal hashes mean identical content'),
  size: z.number().int().describe('bytes of the stored zip'),
  store_kind: z.enum(['dir', 's3']),
  deduplicated: z.boolean().describe('an earlier backup already held this content; nothing new was stored'),
  chart_count: z.number().int(),
  task_id: z.string().nullable(),
  created_at: z.string(),
  restore: z.object({ method: z.literal('POST'), path: z.string() }),
});
export type BackupView = z.infer<typeof backupView>;

export function toBackupView(r: BackupRow): BackupView {
  return {
    id: r.id,
    backup_id: r.id,
    env_id: r.env_id,
    dashboard_id: r.dashboard_id,
    dashboard_uuid: r.dashboard_uuid,
    dashboard_title: r.dashboard_title,
    dashboard_slug: r.dashboard_slug,
    content_hash: r.content_hash.trim(),
    size: r.size,
    store_kind: r.store_kind,
    deduplicated: r.deduplicated,
    chart_count: r.chart_count,
    task_id: r.task_id,
    created_at: new Date(r.created_at).toISOString(),
    restore: { method: 'POST', path: `/api/dashboards/backups/${r.id}/restore` },
  };
}

export const backupList = pageEnvelope(backupView);
