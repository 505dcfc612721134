/**
 * Launching a reviewed session: the checks (every mapping approved, a succeeded preview of this
 * version), the `dataset_launch` task, and the audited handoff answered beside the task id: the
 * audit record written when the launch is accepted, who launched it, and what the task will create
 * where. The task's own result later adds what it did create (ids, links, the undo request).
 */
import type { Context } from 'koa';
import type { DatasetLaunchInput } from '../../contracts/dataset-review.ts';
import type { LaunchPlan, LaunchRow } from '../../db/dataset-review/launches.ts';
import type { SessionRow } from '../../db/dataset-review/sessions.ts';
import { ConflictError } from '../../lib/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { acceptTask } from '../tasks/routes.ts';
import type { AuthorizedSessions } from './policy.ts';

type Launchable = SessionRow & { dataset: NonNullable<SessionRow['dataset']> & { database_id: number } };

/** 409 unless the session can launch at `version`; answers the previewed SQL. */
async function assertLaunchable(app: AppContext, sessions: AuthorizedSessions, s: SessionRow, version: number): Promise<string> {
  const review = app.reviews;
  if (s.version !== version) await sessions.advance(s.id, version); // the 409
  if (!s.dataset) throw new ConflictError('The session has no dataset to launch', 'no_dataset');
  const mappings = await review.mappings.list(s.id);
  const unapproved = mappings.filter((m) => !m.approved);
  if (unapproved.length)
    throw new ConflictError(`${unapproved.length} mapping(s) are not approved: approve them first`, 'mappings_unapproved', {
      mapping_ids: unapproved.map((m) => m.id),
    });
  const preview = s.preview as { status?: string; at_version?: number; compiled_sql?: string } | null;
  if (preview?.status !== 'succeeded' || preview.at_version !== s.version || !preview.compiled_sql) {
    throw new ConflictError('Launch needs a succeeded preview of the current version: preview first', 'preview_required');
  }
  if (s.dataset.database_id === null) throw new ConflictError('The dataset names no database', 'no_dataset');
  return preview.compiled_sql;
}

function launchInput(
  s: Launchable,
  principal: Principal,
  sql: string,
  columns: DatasetLaunchInput['columns'],
  claimedVersion: number,
): DatasetLaunchInput {
  return {
    sessionId: s.id,
    envId: s.env_id,
    datasetId: s.dataset.id,
    datasetName: s.dataset.table_name,
    columns,
    savedQuery: {
      databaseId: s.dataset.database_id,
      label: `Reviewed: ${s.dataset.table_name}`.slice(0, 200),
      sql,
      schema: s.dataset.schema,
      catalog: s.dataset.catalog,
      description: `Previewed in dataset review ${s.id} (version ${s.version}) by ${principal.username}`,
    },
    launchedBy: { id: principal.userId, username: principal.username },
    sessionVersion: claimedVersion,
    dashboardIds: s.dashboard ? [s.dashboard.id] : [],
  };
}

const planOf = (input: DatasetLaunchInput): LaunchPlan => ({
  env_id: input.envId,
  dataset_change: { dataset_id: input.datasetId, dataset_name: input.datasetName, columns: input.columns.map((c) => c.column_name) },
  saved_query: {
    label: input.savedQuery.label,
    database_id: input.savedQuery.databaseId,
    schema: input.savedQuery.schema,
    catalog: input.savedQuery.catalog,
  },
});

export const handoffOut = (r: LaunchRow) => ({
  audit_id: r.id,
  session_id: r.session_id,
  session_version: r.session_version,
  launched_by: { id: r.launched_by, username: r.launched_by_username },
  launched_at: r.created_at.toISOString(),
  will_create: r.plan,
});

/** Accepts the launch (202 with `task_id`, `status` and the audited `handoff`). */
export async function launchSession(
  ctx: Context,
  app: AppContext,
  principal: Principal,
  sessionId: string,
  version: number,
): Promise<void> {
  const review = app.reviews;
  const sessions = review.sessionsOf(principal);
  const s = await sessions.get(sessionId);
  const sql = await assertLaunchable(app, sessions, s, version);
  const fields = await review.fields.list(s.id);
  const columns = fields
    .filter((f) => f.kind === 'column' && (f.label !== null || f.description !== null))
    .map((f) => ({ column_name: f.name, verbose_name: f.label, description: f.description }));
  const claimed = await sessions.advance(s.id, version);
  const input = launchInput(s as Launchable, principal, sql, columns, claimed.version);
  const { taskId } = await acceptTask(ctx, app, { kind: 'dataset_launch', input, params: { session_id: s.id, version }, owner: principal });
  const audit = await app.stores.review.launches.record({
    session_id: s.id,
    session_version: claimed.version,
    task_id: taskId,
    env_id: s.env_id,
    launched_by: principal.userId,
    launched_by_username: principal.username,
    plan: planOf(input),
  });
  ctx.body = { ...(ctx.body as object), handoff: handoffOut(audit) };
}
