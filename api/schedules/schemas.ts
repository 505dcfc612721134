import { z } from 'zod';
import { OVERLAP_POLICIES, SCHEDULE_KINDS, type ScheduleSpec } from '../../contracts/schedules.ts';
import type { ScheduleRow } from '../../db/schedules/store.ts';
import { supersetId } from '../http/schemas.ts';
import { validateBody } from '../validation/schemas.ts';

const envId = (name: string) =>
  z
    .string({ error: `${name} is required` })
    .trim()
    .min(1, `${name} is required`)
    .max(200);

/** Five fields (minute hour day-of-month month day-of-week), UTC; or a named shortcut like @daily. */
const CRON = /^(@(yearly|annually|monthly|weekly|daily|hourly)|(\S+\s+){4}\S+)$/;

const timing = {
  interval_seconds: z
    .number()
    .int()
    .min(5, 'interval_seconds must be at least 5')
    .max(366 * 86400, 'interval_seconds must be at most a year')
    .optional()
    .describe('Run every this many seconds (give this or `cron`)'),
  cron: z
    .string()
    .trim()
    .max(200)
    .regex(CRON, 'cron must have five fields (minute hour day month weekday, UTC) or be @daily, @hourly, ...')
    .optional()
    .describe('A cron expression in UTC (give this or `interval_seconds`)'),
  overlap: z
    .enum(OVERLAP_POLICIES)
    .optional()
    .describe('What a run due while the previous one still runs does: `skip` (default), `buffer_one`, `allow_all`'),
  catchup_window_seconds: z
    .number()
    .int()
    .min(10)
    .max(7 * 86400)
    .optional()
    .describe('Runs missed while Temporal or the worker was away run once if within this window (default 300)'),
};

export const backupParams = z
  .object({
    env_id: envId('env_id'),
    dashboard_ids: z
      .array(supersetId('dashboard'))
      .max(10_000, 'at most 10000 dashboards per backup')
      .optional()
      .describe('Dashboards to back up; absent or empty: every dashboard the environment holds at each run')
      .transform((ids) => (ids ? [...new Set(ids)] : undefined)),
  })
  .strict();

export const driftParams = z
  .object({ source_env_id: envId('source_env_id'), target_env_id: envId('target_env_id') })
  .strict()
  .refine((p) => p.source_env_id !== p.target_env_id, { message: 'source and target must differ', path: ['target_env_id'] });

/** A validation's selection, as POST /api/environments/{env_id}/validate takes it, and the environment. */
export const validateParams = validateBody.extend({ env_id: envId('env_id') }).strict();

const common = {
  name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(100),
  ...timing,
  paused: z.boolean().optional().describe('Create it paused'),
  note: z.string().max(500).optional().describe('Why it is paused (shown in the Temporal web UI too)'),
};

const oneTiming = (b: { interval_seconds?: number | undefined; cron?: string | undefined }) =>
  (b.interval_seconds === undefined) !== (b.cron === undefined);
const oneTimingError = { message: 'give exactly one of interval_seconds and cron', path: ['interval_seconds'] };

export const scheduleCreateBody = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('backup'), params: backupParams, ...common }).strict(),
    z.object({ kind: z.literal('drift_report'), params: driftParams, ...common }).strict(),
    z.object({ kind: z.literal('validate'), params: validateParams, ...common }).strict(),
  ])
  .refine(oneTiming, oneTimingError);

export const scheduleUpdateBody = z
  .object({
    name: common.name.optional(),
    ...timing,
    params: z.record(z.string(), z.unknown()).optional().describe("The kind's parameters, checked against the schedule's kind"),
  })
  .strict()
  .refine((b) => !(b.interval_seconds !== undefined && b.cron !== undefined), oneTimingError);

export const scheduleParams = z.object({ schedule_id: z.string().min(1).max(100) });
export const pauseBody = z.object({ note: z.string().max(500).optional() }).strict();

const specView = z.object({
  interval_seconds: z.number().optional(),
  cron: z.string().optional(),
  overlap: z.enum(OVERLAP_POLICIES),
  catchup_window_seconds: z.number(),
});

export const scheduleView = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(SCHEDULE_KINDS),
  spec: specView,
  params: z.record(z.string(), z.unknown()),
  paused: z.boolean(),
  note: z.string().nullable(),
  created_by: z
    .object({
      id: z.string().nullable(),
      username: z.string().nullable(),
      api_key_id: z
        .string()
        .nullable()
        .describe('the API key it was made with (its runs stop once the key is revoked); null when made by a person signed in'),
    })
    .describe('Whose rights every run has, checked at run time'),
  temporal_schedule_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  next_runs: z.array(z.string()).optional().describe('When Temporal will run it next (one schedule read only)'),
  recent_runs: z
    .array(z.object({ scheduled_at: z.string(), started_at: z.string(), task_id: z.string() }))
    .optional()
    .describe('Its latest runs and the task of each'),
});
export const scheduleList = z.object({ items: z.array(scheduleView), total: z.number() });
export const triggerAnswer = z.object({ schedule_id: z.string(), triggered: z.literal(true) });

export type ScheduleView = z.infer<typeof scheduleView>;

export function toScheduleView(row: ScheduleRow): ScheduleView {
  const spec: ScheduleSpec = row.spec;
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    spec: {
      ...(spec.interval_seconds !== undefined ? { interval_seconds: spec.interval_seconds } : {}),
      ...(spec.cron !== undefined ? { cron: spec.cron } : {}),
      overlap: spec.overlap,
      catchup_window_seconds: spec.catchup_window_seconds,
    },
    params: row.params as unknown as Record<string, unknown>,
    paused: row.paused,
    note: row.note,
    created_by: { id: row.created_by, username: row.created_by_username, api_key_id: row.created_by_api_key_id },
    temporal_schedule_id: row.temporal_schedule_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
