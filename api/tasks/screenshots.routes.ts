/**
 * The browser check's screenshots (`verification: "browser"`, docs/migrating-dashboards.md): one
 * PNG per dashboard and side, read with the task's own read rule (api/tasks/policy.ts through
 * getVisible: `tasks:READ`, or one's own task signed in; a hidden task answers 404).
 */
import { z } from 'zod';
import { NotFoundError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { taskIdParams } from './schemas.ts';

const screenshotParams = taskIdParams.extend({
  screenshot_id: z.uuid().describe("A screenshot id from a dashboard's `verification.browser` (`target_screenshot_id`, `source_screenshot_id`)"),
});

export function screenshotRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/tasks/:task_id/screenshots/:screenshot_id',
      tag: 'Tasks',
      summary: "A browser check's screenshot (PNG)",
      description:
        'The dashboard as the browser check saw it in the target or the source (`verification.browser.target_screenshot_id` / `source_screenshot_id` of a migrated, deployed or published dashboard). Whoever may read the task may read its screenshots; 404 for an unknown task or screenshot, or another task\'s.',
      access: 'authenticated',
      params: screenshotParams,
      responses: {
        200: { description: 'The screenshot', contentType: 'image/png' },
        400: { description: 'Not a screenshot id' },
        404: { description: 'Unknown task or screenshot' },
      },
      async handler(ctx, { params, principal }) {
        const task = await app.tasks.getVisible(params.task_id, principal);
        const png = await app.stores.browserScreenshots.png(task.id, params.screenshot_id);
        if (!png) throw new NotFoundError('Screenshot', params.screenshot_id);
        ctx.type = 'image/png';
        ctx.set('Cache-Control', 'private, max-age=3600');
        ctx.body = png;
      },
    }),
  ];
}
