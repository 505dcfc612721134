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
      description:
        'One report per task, newest first, filtered by `task_type` and `status`, in a stable order. Details: docs/backups-and-reports.md#get-apireports.',
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
      description:
        'The report of the task `report_id`: summary, per-dashboard outcomes, diagnostics, next actions with the exact request to send, and the last warnings and errors of its log. Details: docs/backups-and-reports.md#get-apireportsreport_id.',
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
