/** What the task store accepts as an item-by-item result (the shape in outcomes.ts). Not for workflows: see outcomes.ts. */
import { z } from 'zod';

export const nextActionSchema = z.object({
  action: z.string().min(1),
  description: z.string(),
  request: z.object({ method: z.string(), path: z.string(), body: z.unknown() }).optional(),
});

export const itemOutcomeSchema = z
  .object({
    kind: z.enum(['dashboard', 'dataset', 'repository', 'backup']),
    id: z.union([z.number(), z.string()]).nullable(),
    title: z.string().nullable(),
    status: z.string().min(1),
    outcome: z.enum(['succeeded', 'failed', 'skipped', 'planned']),
    error: z.string().optional(),
    step: z.string().optional(),
    code: z.string().optional(),
    upstream_error: z
      .object({ status: z.number().optional(), message: z.string(), type: z.string().optional(), files: z.unknown().optional() })
      .optional(),
    next_actions: z.array(nextActionSchema),
  })
  .catchall(z.unknown());

export const itemsResultSchema = z
  .object({
    items: z.array(itemOutcomeSchema),
    not_started: z.number().int().min(0),
    cancelled: z.boolean(),
    next_actions: z.array(nextActionSchema),
  })
  .catchall(z.unknown());
