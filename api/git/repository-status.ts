/** What a repository's status answer says: its status word, its last deployment, an item's failure. */
import type { NextAction } from '../../contracts/outcomes.ts';
import type { GitDeploymentRow } from '../../db/git/repositories.ts';
import { AppError } from '../../lib/errors.ts';
import { GitProviderError } from '../../lib/git/providers.ts';
import type { WorkingCopyStatus } from '../../lib/git/working-copy-types.ts';
import type { REPOSITORY_STATUSES } from './schemas.ts';

type Status = (typeof REPOSITORY_STATUSES)[number];

export interface RepositoryStatus {
  status: Status;
  dashboard_id: number;
  env_id: string;
  dashboard_uuid: string | null;
  branch?: string;
  head?: string | null;
  remote_url?: string | null;
  ahead?: number;
  behind?: number;
  staged?: string[];
  modified?: string[];
  untracked?: string[];
  conflicted?: string[];
  has_unfinished_merge?: boolean;
  last_deployed?: ReturnType<typeof deploymentView> | null;
  error?: ItemError;
}

/** A batch item's failure: a stable code, the reason in words, the HTTP status it would have had, and what to do next. */
export interface ItemError {
  code: string;
  detail: string;
  status?: number;
  next_actions?: NextAction[];
}

export function deploymentView(d: GitDeploymentRow) {
  return {
    env_id: d.env_id,
    commit: d.commit.trim(),
    task_id: d.task_id,
    target_dashboard_id: d.target_dashboard_id,
    deployed_by: d.deployed_by,
    approved_by: d.approved_by,
    deployed_at: new Date(d.deployed_at).toISOString(),
  };
}

/** The one word for a readable working copy: a merge first, then local changes, then how it stands to the remote. */
export function statusName(s: WorkingCopyStatus): Status {
  if (s.merging) return 'MERGING';
  if (s.staged.length + s.modified.length + s.untracked.length > 0) return 'DIRTY';
  if (s.ahead && s.behind) return 'DIVERGED';
  if (s.ahead) return 'AHEAD';
  return s.behind ? 'BEHIND' : 'CLEAN';
}

/** A batch item's failure, as its `error`. */
export function errorOf(err: unknown): ItemError {
  if (err instanceof AppError) {
    const actions = err.extra?.next_actions as NextAction[] | undefined;
    return { code: err.code, detail: err.message, status: err.status, ...(actions ? { next_actions: actions } : {}) };
  }
  if (err instanceof GitProviderError) return { code: err.code, detail: err.message };
  return { code: 'internal_error', detail: err instanceof Error ? err.message : String(err) };
}
