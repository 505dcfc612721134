/** Request and answer schemas of branches, pull requests and the provider webhook (review-routes.ts). */
import { z } from 'zod';
import { verificationOption } from '../http/verification.ts';
import { branch, envId } from './schemas.ts';

export const WEBHOOK_SECRET_MASK = '********';

export const branchParams = z.object({
  dashboard_id: z.coerce.number().int().positive().max(2_147_483_647).describe('The Superset dashboard id in `env_id`'),
  branch: branch.describe('The branch name (URL-encoded: `feature%2Fsales`)'),
});

export const branchCreate = z
  .object({
    env_id: envId,
    name: branch,
    from: z
      .string()
      .trim()
      .min(1)
      .max(220)
      .optional()
      .describe('A commit or branch to start from; default HEAD (then local changes come along)'),
    checkout: z.boolean().default(true).describe('Switch to the new branch'),
  })
  .strict();

export const branchView = z.object({
  name: z.string(),
  commit: z.string().nullable(),
  current: z.boolean(),
  remote_commit: z.string().nullable().describe('The remote branch as of the last fetch or push; null: never pushed'),
  pull_request: z.object({ number: z.number(), url: z.string(), state: z.string() }).nullable(),
});
export const branchList = z.object({ current: z.string(), items: z.array(branchView) });
export const branchSwitched = z.object({ branch: z.string(), head: z.string() });
export const branchDeleted = z.object({ branch: z.string(), deleted: z.literal(true) });

const title = z
  .string({ error: 'title is required' })
  .trim()
  .min(1, 'title is required')
  .max(250)
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'no control characters');
const description = z.string().max(20_000).optional().describe('Your own text; Switchyard writes its preview below it');

export const pullRequestCreate = z
  .object({
    env_id: envId,
    branch: branch.describe('The head branch (pushed first)'),
    base: branch.optional().describe("The branch to merge into; default the repository's branch at init"),
    title,
    description,
    target_env_id: envId.describe('Where the preview plans and where a merge deploys'),
    verification: verificationOption,
  })
  .strict();

export const pullRequestRefresh = z.object({ env_id: envId, title: title.optional(), description }).strict();
export const pullRequestParams = z.object({
  dashboard_id: z.coerce.number().int().positive().max(2_147_483_647).describe('The Superset dashboard id in `env_id`'),
  number: z.coerce
    .number()
    .int()
    .positive()
    .max(2_147_483_647)
    .describe("The provider's number of the pull request (GitLab: the merge request's iid)"),
});
export const pullRequestQuery = z.object({ env_id: envId, state: z.enum(['open', 'closed', 'merged']).optional() });

export const pullRequestView = z.object({
  id: z.string(),
  number: z.number(),
  url: z.string(),
  title: z.string(),
  state: z.enum(['open', 'closed', 'merged']),
  head_branch: z.string(),
  base_branch: z.string(),
  head_commit: z.string().nullable(),
  target_env_id: z.string(),
  preview_task_id: z.string().nullable(),
  preview_state: z.string().nullable().describe('The last `switchyard/preview` status posted: pending, success or failure'),
  merge_commit: z.string().nullable(),
  deploy_task_id: z.string().nullable(),
});
export const pullRequestList = z.object({ items: z.array(pullRequestView) });
export const pullRequestOpened = z.object({ pull_request: pullRequestView, preview_task_id: z.string() });
export const previewStarted = z.object({ pull_request: pullRequestView, preview_task_id: z.string(), pushed: z.boolean() });

export const webhookSet = z
  .object({
    secret: z
      .string({ error: 'secret is required' })
      .min(16, 'secret must be at least 16 characters')
      .max(200)
      .regex(/^[\x21-\x7e]+$/, 'secret must be printable ASCII without spaces')
      .refine((v) => v !== WEBHOOK_SECRET_MASK, 'send the secret itself, not the mask')
      .describe('Write-only: the secret the provider signs deliveries with (GitLab: sends as X-Gitlab-Token)'),
  })
  .strict();
export const webhookView = z.object({
  config_id: z.string(),
  configured: z.boolean(),
  secret: z.literal(WEBHOOK_SECRET_MASK).nullable(),
  owner: z.string().nullable().describe('The person deliveries act as, with their rights when each arrives'),
  url: z.string().describe('Where the provider delivers (path on this server)'),
});
export const webhookParams = z.object({ config_id: z.string().min(1).max(200) });
export const webhookAnswer = z.object({
  outcome: z.enum(['deploying', 'ignored']),
  reason: z.string().optional(),
  task_id: z.string().optional(),
  pull_request: z.number().optional(),
});
