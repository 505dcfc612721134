/**
 * The browser check's screenshots (`verification: "browser"`, docs/migrating-dashboards.md): one
 * PNG per dashboard and side. A screenshot shows the dashboard as the environment's service
 * account sees it, data included, without the reader's row-level security: on top of the task's
 * read rule (getVisible; a hidden task answers 404) it is the requester's and the admins' only
 * (api/tasks/policy.ts seeScreenshots, the rule of a SQL query's rows), and no cache keeps it.
 */
import { z } from 'zod';
import { ForbiddenError, NotFoundError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { taskPolicy } from './policy.ts';
import { taskIdParams } from './schemas.ts';

const screenshotParams = taskIdParams.extend({
  screenshot_id: z
    .uuid()
    .describe("A screenshot id from a dashboard's `verification.browser` (`target_screenshot_id`, `source_screenshot_id`)"),
});

export function screenshotRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/tasks/:task_id/screenshots/:screenshot_id',
      tag: 'Tasks',
      summary: "A browser check's screenshot (PNG)",
      description:
        "The PNG of a dashboard as a browser check saw it; shown only to the task's requester and to admins, never cached. Details: docs/tasks.md#get-apitaskstask_idscreenshotsscreenshot_id.",
      access: 'authenticated',
      params: screenshotParams,
      responses: {
        200: { description: 'The screenshot', contentType: 'image/png' },
        400: { description: 'Not a screenshot id' },
        403: { description: "The task is not the caller's (and the caller is not an admin signed in)" },
        404: { description: 'Unknown task or screenshot' },
      },
      async handler(ctx, { params, principal }) {
        const task = await app.tasks.getVisible(params.task_id, principal);
        if (!taskPolicy.seeScreenshots(principal, task))
          throw new ForbiddenError(
            "A browser check's screenshot shows the service account's view of the data: only the task's requester and admins see it",
          );
        const png = await app.stores.browserScreenshots.png(task.id, params.screenshot_id);
        if (!png) throw new NotFoundError('Screenshot', params.screenshot_id);
        ctx.type = 'image/png';
        ctx.set('Cache-Control', 'private, no-store');
        ctx.body = png;
      },
    }),
  ];
}
