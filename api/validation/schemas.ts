import { z } from 'zod';
import { MAX_DASHBOARDS_PER_TASK } from '../../contracts/tasks.ts';
import { supersetId } from '../http/schemas.ts';

const name = (what: string) => z.string().trim().min(1, `${what} must not be empty`).max(250, `${what} is at most 250 characters`);

/** Which dashboards to validate; none given: every dashboard of the environment. Criteria narrow each other. */
export const validationSelection = {
  dashboard_ids: z
    .array(supersetId('dashboard'))
    .max(MAX_DASHBOARDS_PER_TASK, `at most ${MAX_DASHBOARDS_PER_TASK} dashboards per validation`)
    .optional()
    .describe('Dashboards to validate (absent or empty: every dashboard of the environment, or those the tag and owner select)')
    .transform((ids) => (ids?.length ? [...new Set(ids)] : undefined)),
  tag: name('tag').optional().describe('Only dashboards carrying this custom tag (its exact name)'),
  owner: name('owner').optional().describe('Only dashboards this Superset user (by username) owns'),
};

export const validateBody = z
  .object({
    ...validationSelection,
    browser: z
      .boolean()
      .optional()
      .describe('Also open each dashboard in headless Chromium and read each chart as drawn (the browser check)'),
  })
  .strict();
