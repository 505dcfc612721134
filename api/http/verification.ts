/** The `verification` request option of the migration, git deploy and release publish endpoints, in one place. */
import { z } from 'zod';
import { VERIFICATION_MODES, type VerificationMode } from '../../contracts/browser-check.ts';

export const verificationOption = z
  .enum(VERIFICATION_MODES)
  .default('queries')
  .describe(
    "`queries` (the default): each chart's query is run in the target. `browser`: then each dashboard is also opened in the target's Superset in headless Chromium (and the source's beside it), each chart's rendered state recorded and both screenshots stored (GET /api/tasks/{id}/screenshots/{screenshot_id}); a chart that shows an error in the target only fails the dashboard, a browser that cannot reach Superset makes it `not_verifiable`, never a failure (docs/migrating-dashboards.md, Browser check)",
  );

/** The task input's field: absent for the default, so inputs from before the option read the same. */
export function verificationInput(mode: VerificationMode): { verification?: 'browser' } {
  return mode === 'browser' ? { verification: 'browser' } : {};
}
