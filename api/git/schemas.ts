import { z } from 'zod';
import { nextActionSchema } from '../../contracts/outcome-schemas.ts';
import type { GitConfigRow } from '../../db/git/configs.ts';
import { companionsSchema } from '../dashboard-migration/input.ts';
import { verificationOption } from '../http/verification.ts';

export const PAT_MASK = '********';
export const MAX_REPOSITORY_STATUS_BATCH = 100;
export const REPOSITORY_STATUSES = ['NO_REPO', 'CLEAN', 'DIRTY', 'AHEAD', 'BEHIND', 'DIVERGED', 'MERGING', 'ERROR'] as const;

const text = (max: number, what: string) =>
  z
    .string({ error: `${what} is required` })
    .trim()
    .min(1, `${what} is required`)
    .max(max, `${what} must be at most ${max} characters`)
    .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, `${what} must not contain control characters`);

const baseUrl = z
  .string({ error: 'base_url is required' })
  .trim()
  .min(1, 'base_url is required')
  .max(2000)
  .transform((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'base_url must be an absolute http(s) URL' });
      return z.NEVER;
    }
    if (!/^https?:$/.test(u.protocol)) ctx.addIssue({ code: 'custom', message: 'base_url must be http or https' });
    if (u.username || u.password) ctx.addIssue({ code: 'custom', message: 'base_url must not carry credentials (send the token as pat)' });
    if (u.search || u.hash) ctx.addIssue({ code: 'custom', message: 'base_url must not have a query or fragment' });
    return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
  })
  .describe('The server, e.g. `https://gitea.example.com`, `https://github.com`, `https://gitlab.com` (a path prefix is allowed)');

/** A git branch name, conservatively: no spaces, `..`, leading dash or trailing `.lock`. */
export const branch = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^(?!-)(?!.*\.\.)(?!.*\.lock$)(?!.*\/$)[A-Za-z0-9._\/-]+$/, 'must be a valid branch name');

const owner = text(100, 'owner').regex(/^[A-Za-z0-9._\/-]+$/, 'owner must be a user, organisation or group name');
const patText = z
  .string({ error: 'pat is required' })
  .min(1, 'pat is required')
  .max(1000)
  .regex(/^[\x21-\x7e]+$/, 'pat must be printable ASCII without spaces');
const pat = patText
  .refine((v) => v !== PAT_MASK, 'send the token itself, not the mask')
  .describe('Personal access token; write-only (answers show a fixed mask)');

export const providerKind = z.enum(['github', 'gitlab', 'gitea']).describe('`gitea` is the self-hosted kind');

export const gitConfigCreate = z
  .object({
    name: text(100, 'name'),
    provider: providerKind,
    base_url: baseUrl,
    owner,
    default_branch: branch.default('main'),
    pat,
  })
  .strict();

export const gitConfigUpdate = z
  .object({
    name: text(100, 'name').optional(),
    provider: providerKind.optional(),
    base_url: baseUrl.optional(),
    owner: owner.optional(),
    default_branch: branch.optional(),
    pat: patText.optional().describe('Left out (or sent as the mask) keeps the stored token; required when base_url or provider changes'),
  })
  .strict();

export const gitConfigView = z.object({
  id: z.string(),
  name: z.string(),
  provider: providerKind,
  base_url: z.string(),
  owner: z.string(),
  default_branch: z.string(),
  pat: z.literal(PAT_MASK).describe('Always the mask; the token is never returned'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const gitConfigList = z.object({ items: z.array(gitConfigView), total: z.number().int() });

export function toConfigView(row: GitConfigRow): z.infer<typeof gitConfigView> {
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    base_url: row.base_url,
    owner: row.owner,
    default_branch: row.default_branch,
    pat: PAT_MASK,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export const configIdParams = z.object({ config_id: z.string().max(200) });

export const connectionTest = z.object({
  ok: z.literal(true),
  provider: providerKind,
  account: z.object({ login: z.string(), name: z.string().nullable(), email: z.string().nullable() }),
  latency_ms: z.number().int(),
});

export const remoteRepository = z.object({
  name: z.string(),
  full_name: z.string(),
  clone_url: z.string(),
  private: z.boolean(),
  default_branch: z.string(),
});
export const remoteRepositoryList = z.object({ items: z.array(remoteRepository), total: z.number().int() });

const repoName = z
  .string({ error: 'name is required' })
  .trim()
  .min(1, 'name is required')
  .max(100)
  .regex(/^[A-Za-z0-9._-]+$/, 'name may hold letters, digits, dot, dash and underscore')
  .refine((v) => !v.startsWith('.') && !v.endsWith('.git'), 'name must not start with a dot or end with .git');

export const remoteRepositoryCreate = z
  .object({
    name: repoName,
    private: z.boolean().default(true),
    description: z.string().max(500).optional(),
  })
  .strict();

// --- dashboard repositories -------------------------------------------------------------------

const dashboardId = z.coerce
  .number({ error: 'must be a dashboard id (a positive integer)' })
  .int('must be a dashboard id (a positive integer)')
  .positive('must be a dashboard id (a positive integer)')
  .max(2_147_483_647, 'must be a dashboard id (a positive integer)');
export const envId = z.string({ error: 'env_id is required' }).trim().min(1, 'env_id is required').max(200);

export const dashboardParams = z.object({ dashboard_id: dashboardId.describe('The Superset dashboard id in `env_id`') });
export const envQuery = z.object({ env_id: envId });
export const envBody = z.object({ env_id: envId }).strict();
export const syncBody = z
  .object({
    env_id: envId,
    branch: branch
      .optional()
      .describe('Sync onto this branch: switched to first (the working tree must be clean), or made at HEAD when new'),
  })
  .strict();

export const initBody = z
  .object({
    env_id: envId,
    config_id: z.string().max(200).optional().describe('The git config of the remote; none: a local repository only'),
    remote_name: repoName.optional().describe('Repository name on the server (default `dashboard-<uuid>`)'),
    create_remote: z.boolean().default(false).describe('Create the repository on the server through the config'),
    private: z.boolean().default(true),
    branch: branch.optional().describe("Default: the config's default branch, else `main`"),
  })
  .strict();

export const diffQuery = z.object({
  env_id: envId,
  from: z.string().max(220).optional().describe('A commit, branch or `HEAD~N`; default HEAD'),
  to: z.string().max(220).optional().describe('Default: the working tree'),
});

export const historyQuery = z.object({
  env_id: envId,
  limit: z.coerce.number({ error: 'limit must be an integer' }).int().min(1).max(500).default(50),
});

export const commitBody = z
  .object({
    env_id: envId,
    message: z.string({ error: 'message is required' }).trim().min(1, 'message is required').max(5000),
    paths: z.array(z.string().min(1).max(500)).min(1).max(1000).optional().describe('Only these changed files (default: every change)'),
    branch: branch.optional().describe('Commit onto this branch: switched to first, or made at HEAD (the changes come along) when new'),
  })
  .strict();

export const resolveBody = z
  .object({
    env_id: envId,
    resolutions: z
      .array(
        z.discriminatedUnion('strategy', [
          z.object({ path: z.string().min(1).max(500), strategy: z.literal('ours') }).strict(),
          z.object({ path: z.string().min(1).max(500), strategy: z.literal('theirs') }).strict(),
          z.object({ path: z.string().min(1).max(500), strategy: z.literal('content'), content: z.string().max(5_000_000) }).strict(),
        ]),
      )
      .min(1, 'resolutions must not be empty')
      .max(1000),
  })
  .strict();

export const continueBody = z
  .object({ env_id: envId, message: z.string().trim().min(1).max(5000).optional().describe('Default: the merge message') })
  .strict();

export const batchBody = z
  .object({
    env_id: envId,
    dashboard_ids: z
      .array(dashboardId, { error: 'dashboard_ids must be a list of dashboard ids' })
      .min(1, 'dashboard_ids must not be empty')
      .max(10_000, 'at most 10000 ids per request (the first 100 distinct ones are read)'),
  })
  .strict();

export const deployBody = z
  .object({
    env_id: envId.describe('The environment `dashboard_id` belongs to'),
    target_env_id: envId.optional().describe('Where to deploy (default: env_id)'),
    commit: z.string({ error: 'commit is required' }).trim().min(4).max(220).describe('The commit to deploy (id, branch or `HEAD~N`)'),
    overwrite: z.boolean().default(true),
    verification: verificationOption,
    approval_timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 24 * 3600)
      .optional()
      .describe('Into a protected environment: a shorter approval window than APPROVAL_TIMEOUT_SECONDS (never a longer one)'),
    db_mappings: z
      .array(
        z
          .object({
            database_name: z.string().min(1).max(250).optional(),
            database_uuid: z.uuid().optional(),
            target_database_id: z.number().int().positive(),
          })
          .strict()
          .refine((m) => m.database_name || m.database_uuid, 'database_name or database_uuid is required'),
      )
      .max(100)
      .default([])
      .describe('Databases of the repository (by name or UUID) → target database ids, over the ones found by UUID, name or saved mappings'),
    companions: companionsSchema().describe(
      "what the commit's companion files (companions/, written by sync) get in the target, per kind, as in a migration (`copy`, `strict`, `ignore`). Details: docs/git.md#field-companions-of-a-deploy",
    ),
  })
  .strict();

const deployment = z.object({
  env_id: z.string(),
  commit: z.string(),
  task_id: z.string(),
  target_dashboard_id: z.number().int().nullable(),
  deployed_by: z.string().nullable(),
  approved_by: z.string().nullable(),
  deployed_at: z.string(),
});

export const statusView = z
  .object({
    status: z.enum(REPOSITORY_STATUSES),
    dashboard_id: z.number().int(),
    env_id: z.string(),
    dashboard_uuid: z.string().nullable(),
    branch: z.string().optional(),
    head: z.string().nullable().optional(),
    remote_url: z.string().nullable().optional(),
    ahead: z.number().int().optional(),
    behind: z.number().int().optional(),
    staged: z.array(z.string()).optional(),
    modified: z.array(z.string()).optional(),
    untracked: z.array(z.string()).optional(),
    conflicted: z.array(z.string()).optional(),
    has_unfinished_merge: z.boolean().optional(),
    last_deployed: deployment.nullable().optional().describe('The newest deploy of a pinned commit, any environment'),
    error: z
      .object({
        code: z.string(),
        detail: z.string(),
        status: z.number().int().optional(),
        next_actions: z
          .array(nextActionSchema)
          .optional()
          .describe('What to do about it (an unavailable Superset: test the environment, then retry)'),
      })
      .optional(),
  })
  .describe('`NO_REPO` when the dashboard has no repository (not an error)');

export const batchView = z.object({
  items: z.record(z.string(), statusView),
  truncated: z.boolean(),
  requested: z.number().int(),
});

export const diffView = z.object({
  from: z.string().nullable(),
  to: z.string().nullable().describe('null: the working tree'),
  files: z.array(z.object({ path: z.string(), change: z.enum(['added', 'modified', 'deleted']), patch: z.string() })),
});

export const historyView = z.object({
  items: z.array(
    z.object({
      commit: z.string(),
      message: z.string(),
      author: z.object({ name: z.string(), email: z.string() }),
      committed_at: z.string(),
      files: z.array(z.string()),
    }),
  ),
});

export const initView = z.object({
  dashboard_id: z.number().int(),
  env_id: z.string(),
  dashboard_uuid: z.string(),
  created: z.boolean(),
  adopted_remote_history: z.boolean().describe('The working copy was made from the history already on the remote'),
  branch: z.string(),
  head: z.string(),
  config_id: z.string().nullable(),
  remote_url: z.string().nullable(),
  remote_created: z.boolean(),
});

export const syncView = z.object({
  dashboard_uuid: z.string(),
  env_id: z.string(),
  changed: z.array(z.string()),
  companions: z
    .object({
      captured: z.boolean().describe('false: they could not be read this time and the companion files stay as the repository has them'),
      kinds: z
        .record(z.string(), z.string())
        .optional()
        .describe('per companion kind: `captured`, or why the environment would not show it (also in companions/kinds.yaml)'),
      error: z.string().optional(),
    })
    .describe(
      "the dashboard's companions (owners, roles, tags, reports, annotation layers, CSS templates, saved queries, themes, embedded) written under companions/, one YAML each",
    ),
  status: statusView,
});

export const commitView = z.object({ committed: z.boolean(), commit: z.string(), files: z.array(z.string()) });
export const pushView = z.object({
  pushed: z.boolean(),
  commit: z.string().nullable(),
  remote_url: z.string().nullable(),
  remote_messages: z
    .array(z.string())
    .describe(
      "What the git server said while taking the push (its `remote:` lines: a hook's output, a pull request link), read to the answer's end",
    ),
  preview: z
    .object({ pull_request: z.number(), preview_task_id: z.string() })
    .optional()
    .describe('The open pull request from the pushed branch, previewed again (when you may update it)'),
});
export const pullView = z.object({
  status: z.enum(['up_to_date', 'fast_forward', 'merged', 'conflict']),
  commit: z.string().nullable(),
  conflicts: z.array(z.string()),
});

const side = z.string().nullable();
export const mergeStatusView = z.object({
  has_unfinished_merge: z.boolean(),
  ours: z.string().nullable(),
  theirs: z.string().nullable(),
  conflicts: z.array(z.object({ path: z.string(), ours: side, theirs: side, base: side, working: side, resolved: z.boolean() })),
});
export const resolveView = z.object({
  resolved: z.array(z.object({ path: z.string(), strategy: z.string(), content: z.string().nullable() })),
  remaining: z.array(z.string()),
});
export const abortView = z.object({ status: z.literal('aborted'), head: z.string().nullable() });
export const continueView = z.object({ status: z.literal('committed'), commit: z.string() });
