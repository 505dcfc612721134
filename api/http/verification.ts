/** The `verification` request option of the migration, git deploy and release publish endpoints, in one place. */
import { z } from 'zod';
import { VERIFICATION_MODES, type VerificationMode } from '../../contracts/browser-check.ts';

export const verificationOption = z
  .enum(VERIFICATION_MODES)
  .default('queries')
  .describe(
    "`queries` (the default): each chart's query is run in the target. `browser`: each dashboard is also opened in headless Chromium, beside the source's, and screenshotted. Details: docs/migrating-dashboards.md#field-verification",
  );

/** The task input's field: absent for the default, so inputs from before the option read the same. */
export function verificationInput(mode: VerificationMode): { verification?: 'browser' } {
  return mode === 'browser' ? { verification: 'browser' } : {};
}
