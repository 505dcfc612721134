import { ANSWER_ITEMS_LIMIT } from '../../contracts/task-answer.ts';
import type { AppContext } from '../context.ts';
import { concealLogLine, hidesQueryRows } from '../tasks/query-rows.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { boundedReport } from './bounded.ts';
import { buildReport, reportListItem, type LogLine } from './report.ts';
import { reportIdParams, reportList, reportListQuery, reportView } from './schemas.ts';

const LOG_EXCERPT = 20;

/** Reports summarise tasks (`report_id` = task id); access as for tasks: `tasks:READ`, or the owner. */
export function reportRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/reports',
      tag: 'Reports',
      summary: 'List reports',
      description: [
        'One report per task, newest first. The body has exactly the keys `items`, `total`, `page`, `page_size`, `has_next` and `applied_filters`.',
        'Filters: `task_type` (400 for a type the service does not have) and `status`.',
        'The order is `created_at` descending, then `id` descending: every timestamp is stored as `timestamptz` (naive input is read as UTC when written), so the order compares instants, never formatted strings, and the id makes it total, so pages are stable even when tasks share a timestamp.',
        'Callers without `tasks:READ` see only reports of their own tasks.',
      ].join(' '),
      access: 'authenticated',
      query: reportListQuery,
      responses: {
        200: { description: 'A page of reports', schema: reportList },
        400: { description: 'Invalid pagination, task type or status' },
      },
      async handler(_ctx, { query, principal }) {
        const page = await app.tasks.list({ type: query.task_type, status: query.status }, query.page, query.page_size, principal);
        return {
          ...page,
          items: page.items.map(reportListItem),
          applied_filters: { task_type: query.task_type ?? null, status: query.status ?? null },
        };
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/reports/:report_id',
      tag: 'Reports',
      summary: 'Get a report',
      description: [
        '`{ "report": ... }` for the task `report_id`: summary and headline, per-dashboard outcomes, diagnostics (what failed, where, and Superset\'s own error), next actions with the exact request to send (for example one call retrying every failed dashboard), and the last warnings and errors from the task log.',
        `A task of more than ${ANSWER_ITEMS_LIMIT} items leaves its items out (\`items_omitted: true\`, \`items_total\`, \`items_url\`: page them there) and of the diagnostics and next actions about single items keeps the first ${ANSWER_ITEMS_LIMIT} of each, counting those it left out; the summary and the task-level next actions (one retry of every failed item) count every item.`,
        '404 when there is no such task (or it is not visible to the caller).',
      ].join(' '),
      access: 'authenticated',
      params: reportIdParams,
      responses: { 200: { description: 'The report', schema: reportView }, 404: { description: 'Unknown report' } },
      async handler(_ctx, { params, principal }) {
        // Hidden reports answer 404 like absent ones, so ids of others' tasks cannot be probed.
        const task = await app.tasks.getVisible(params.report_id, principal, 'Report');
        const problems: LogLine[] = await app.taskLogs.lastProblems(task.id, LOG_EXCERPT);
        const logs = hidesQueryRows(task, principal) ? problems.map(concealLogLine) : problems;
        return { report: boundedReport(buildReport(task, logs, app.tasks.temporalUiUrl(task.id))) };
      },
    }),
  ];
}
