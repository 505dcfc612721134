/** The task's items endpoint and the item summary in the task answer: schemas (OpenAPI comes from these). */
import { z } from 'zod';
import { CHANGE_CLASSES, ITEM_FILTERS, OBJECT_ACTIONS, OUTCOME_CLASSES } from '../../contracts/outcomes.ts';
import { csv, pageEnvelope, pagination } from '../http/schemas.ts';

export const itemsQuery = z.object({
  ...pagination,
  outcome: csv(z.enum(ITEM_FILTERS)).describe(
    `comma-separated; an item matches any: an outcome class (${OUTCOME_CLASSES.join(', ')}) or a change class (changed: one of its objects is or would be created or updated; unchanged: it succeeded or was planned and changes nothing)`,
  ),
  q: z.string().trim().min(1).max(200).optional().describe("case-insensitive substring of the item's title, or its exact id"),
});

const count = z.number().int();
const nextAction = z.object({
  action: z.string(),
  description: z.string(),
  request: z.object({ method: z.string(), path: z.string(), body: z.unknown() }).optional(),
});

export const itemRow = z.object({
  position: count.describe("the item's place in the task's request (its result order)"),
  change: z.enum(CHANGE_CLASSES).nullable().describe('null for failed and skipped items'),
  item: z
    .record(z.string(), z.unknown())
    .describe(
      "the item as the task result lists it (contracts/outcomes.ts ItemOutcome; a migration adds objects, verification, companions...). A migrated dashboard's `verification_state` says whether this task verified it (`verified`: `at`, `checked` imported or unchanged_target), carried an earlier task's verification (`carried`: `from_task_id`, `at`, `reason`) or did not (`not_verified`: `reason`)",
    ),
});

export const itemPage = pageEnvelope(itemRow);

export const itemsSummary = z
  .object({
    total: count,
    by_outcome: z.record(z.string(), count).describe(`items per outcome class (${OUTCOME_CLASSES.join(', ')})`),
    by_change: z.record(z.string(), count).describe('items per change class (changed, unchanged)'),
    by_status: z.record(z.string(), count).describe("items per the task kind's own status word"),
    objects: z.object({
      total: count,
      by_action: z.record(z.string(), count).describe(`objects of all items per action (${OBJECT_ACTIONS.join(', ')})`),
      by_kind: z
        .record(z.string(), z.record(z.string(), count))
        .describe('the same per kind of object (dashboard, chart, dataset, database)'),
    }),
    durations: z.object({
      queued_ms: z.number().nullable().describe('from creation to the workflow starting'),
      run_ms: z.number().nullable().describe('from start to finish (null while it runs)'),
      migration_ms: z.number().nullable().describe("a migration's export, plan and import"),
      verification_ms: z
        .number()
        .nullable()
        .describe("a migration's verification of what it imported, the part after its last import (the rest runs beside the imports)"),
      item_verification_ms: z.object({ total: z.number(), max: z.number(), items: count }).describe("the items' own verification times"),
    }),
    bulk_actions: z
      .array(nextAction)
      .describe(
        "actions over all failed items at once: the task's own retry of them with the same options, and each item fix merged into one request for every item it was suggested for",
      ),
  })
  .describe(
    "Counts of the task's items (read them a page at a time from GET /api/tasks/{task_id}/items); null for tasks that do not work item by item",
  );
