import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { pauseBody, scheduleCreateBody, scheduleList, scheduleParams, scheduleUpdateBody, scheduleView, triggerAnswer } from './schemas.ts';

const READ = { permission: 'schedules:READ' } as const;
const WRITE = { permission: 'schedules:WRITE' } as const;
const unknown = { 404: { description: 'Unknown schedule' } };

/** Recurring backups and drift reports, as Temporal Schedules whose every run is an ordinary task. */
export function scheduleRoutes(app: AppContext): AnyRoute[] {
  const { schedules } = app;
  return [
    defineRoute({
      method: 'get',
      path: '/api/schedules',
      tag: 'Schedules',
      summary: 'List schedules',
      access: READ,
      responses: { 200: { description: 'Every schedule', schema: scheduleList } },
      async handler() {
        const items = await schedules.list();
        return { items, total: items.length };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/schedules',
      tag: 'Schedules',
      summary: 'Create a schedule',
      description:
        "A recurring `backup`, `drift_report` or `validate` task every `interval_seconds` or on a `cron` expression (UTC), kept as a Temporal Schedule; each run is an ordinary task with its creator's rights at run time. Details: docs/automation.md#post-apischedules.",
      access: WRITE,
      body: scheduleCreateBody,
      responses: {
        201: { description: 'The schedule', schema: scheduleView },
        400: { description: 'Invalid body (both or neither of interval_seconds and cron, a cron Temporal cannot read, ...)' },
        404: { description: 'Unknown environment' },
        409: { description: 'A schedule of that name exists' },
      },
      async handler(ctx, { body, principal }) {
        const view = await schedules.create(body, principal);
        ctx.status = 201;
        ctx.set('Location', `/api/schedules/${view.id}`);
        return view;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/schedules/:schedule_id',
      tag: 'Schedules',
      summary: 'Get a schedule, its next run times and the tasks of its latest runs',
      access: READ,
      params: scheduleParams,
      responses: { 200: { description: 'The schedule', schema: scheduleView }, ...unknown },
      handler: (_ctx, { params }) => schedules.get(params.schedule_id),
    }),
    defineRoute({
      method: 'put',
      path: '/api/schedules/:schedule_id',
      tag: 'Schedules',
      summary: 'Change a schedule (name, timing, overlap, catch-up window, params)',
      description:
        'Fields absent are kept. `interval_seconds` or `cron` replaces the timing. `params` are checked against the schedule kind. The change applies to the next run.',
      access: WRITE,
      params: scheduleParams,
      body: scheduleUpdateBody,
      responses: {
        200: { description: 'The schedule', schema: scheduleView },
        400: { description: 'Invalid body' },
        ...unknown,
        409: { description: 'Name taken' },
      },
      handler: (_ctx, { params, body, principal }) => schedules.update(params.schedule_id, body, principal),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/schedules/:schedule_id',
      tag: 'Schedules',
      summary: 'Delete a schedule (its Temporal Schedule too; tasks it started stay)',
      access: WRITE,
      params: scheduleParams,
      responses: { 204: { description: 'Deleted' }, ...unknown },
      async handler(ctx, { params }) {
        await schedules.remove(params.schedule_id);
        ctx.status = 204;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/schedules/:schedule_id/pause',
      tag: 'Schedules',
      summary: 'Pause a schedule, with a note',
      description: 'No run starts until it is resumed; the note shows here and in the Temporal web UI. A run in progress finishes.',
      access: WRITE,
      params: scheduleParams,
      body: pauseBody,
      responses: {
        200: { description: 'The schedule', schema: scheduleView },
        ...unknown,
        409: { description: 'Temporal lost the schedule' },
      },
      handler: (_ctx, { params, body, principal }) => schedules.pause(params.schedule_id, body.note, principal),
    }),
    defineRoute({
      method: 'post',
      path: '/api/schedules/:schedule_id/resume',
      tag: 'Schedules',
      summary: 'Resume a paused schedule',
      access: WRITE,
      params: scheduleParams,
      responses: {
        200: { description: 'The schedule', schema: scheduleView },
        ...unknown,
        409: { description: 'Temporal lost the schedule' },
      },
      handler: (_ctx, { params, principal }) => schedules.resume(params.schedule_id, principal),
    }),
    defineRoute({
      method: 'post',
      path: '/api/schedules/:schedule_id/trigger',
      tag: 'Schedules',
      summary: 'Run a schedule once now',
      description:
        "Starts one run at once, paused or not (a run still in progress makes it follow the overlap policy). Its task appears in `GET /api/tasks` and in the schedule's `recent_runs`.",
      access: WRITE,
      params: scheduleParams,
      responses: {
        202: { description: 'Triggered', schema: triggerAnswer },
        ...unknown,
        409: { description: 'Temporal lost the schedule' },
      },
      async handler(ctx, { params, principal }) {
        await schedules.trigger(params.schedule_id, principal);
        ctx.status = 202;
        return { schedule_id: params.schedule_id, triggered: true as const };
      },
    }),
  ];
}
