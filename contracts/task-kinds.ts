/**
 * The task-kind registry: one entry per kind of task (its name is the task type) says which
 * workflow runs it, who may start it, which environments and dashboards it touches (for search
 * and filters) and how it reads to an operator in the Temporal web console. A new kind's entry
 * lives beside its contract and is listed here: docs/layout.md, "Adding a task kind".
 */
import type { BackupInput, RestoreInput } from './backup.ts';
import type { ReleaseCheckInput, ReleasePublishInput } from './clean-release.ts';
import type { DatasetLaunchInput } from './dataset-review.ts';
import type { DatasetChangeInput, LlmDocsInput, MapColumnsInput } from './datasets.ts';
import { deployRulesFrom, type GitDeployInput, type GitPreviewInput } from './git.ts';
import type { MigrationInput } from './migration.ts';
import type { DriftReportInput } from './schedules.ts';
import type { SelfcheckInput } from './selfcheck.ts';
import type { TaskKindEntry } from './task-kind.ts';
import type { TaskApproval } from './tasks.ts';
import type { ValidateInput } from './validation.ts';

export type { EnvNames, TaskKindEntry } from './task-kind.ts';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const list = (ids: readonly (number | string)[], max = 10) =>
  ids.length <= max ? ids.join(', ') : `${ids.slice(0, max).join(', ')} and ${ids.length - max} more`;
const numeric = (ids: Array<number | string> | null) => ids?.map((id) => (typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id));

const migration: TaskKindEntry<MigrationInput, 'migrationWorkflow'> = {
  workflow: 'migrationWorkflow',
  permission: 'dashboards:MIGRATE',
  envIds: (i) => [i.sourceEnvId, i.targetEnvId],
  writesInto: (i) => (i.dryRun ? null : i.targetEnvId),
  dashboardIds: (i) => i.dashboardIds.map(String),
  frozenPair: (i) => ({ sourceEnvId: i.sourceEnvId, targetEnvId: i.targetEnvId }),
  describe: (i, names) => ({
    summary: `${i.dryRun ? 'Dry run: migrate' : 'Migrate'} ${plural(i.dashboardIds.length, 'dashboard')} ${names(i.sourceEnvId)} → ${names(i.targetEnvId)}`,
    details: `Dashboards (source ids): ${list(i.dashboardIds)}. Overwrite: ${i.overwrite ? 'yes' : 'no'}. Database mappings given: ${i.dbMappings.length}.`,
  }),
  retry: (p, ids) => {
    const { dashboard_ids, ...rest } = p;
    return { method: 'POST', path: '/api/dashboards/migrate', body: { ...rest, dashboard_ids: numeric(ids) ?? dashboard_ids } };
  },
};

const backup: TaskKindEntry<BackupInput, 'backupWorkflow'> = {
  workflow: 'backupWorkflow',
  permission: 'dashboards:BACKUP',
  envIds: (i) => [i.envId],
  writesInto: () => null,
  dashboardIds: (i) => i.dashboardIds.map(String),
  describe: (i, names) => ({
    summary: `Back up ${plural(i.dashboardIds.length, 'dashboard')} of ${names(i.envId)}`,
    details: `Dashboards: ${list(i.dashboardIds)}.`,
  }),
  retry: (p, ids) => ({
    method: 'POST',
    path: '/api/dashboards/backup',
    body: { env_id: p.env_id, dashboard_ids: numeric(ids) ?? p.dashboard_ids },
  }),
};

const restore: TaskKindEntry<RestoreInput, 'restoreWorkflow'> = {
  workflow: 'restoreWorkflow',
  permission: 'dashboards:BACKUP',
  envIds: (i) => [i.envId],
  writesInto: (i) => i.envId,
  dashboardIds: (i) => [String(i.dashboardId)],
  describe: (i, names) => ({ summary: `Restore dashboard ${i.dashboardId} of ${names(i.envId)} from backup ${i.backupId}` }),
  retry: (p) => ({
    method: 'POST',
    path: `/api/dashboards/backups/${String(p.backup_id)}/restore`,
    body: p.target_env_id ? { target_env_id: p.target_env_id } : {},
  }),
};

const selfcheck: TaskKindEntry<SelfcheckInput, 'selfcheckWorkflow'> = {
  workflow: 'selfcheckWorkflow',
  permission: 'admin',
  envIds: () => [],
  writesInto: () => null,
  dashboardIds: () => [],
  describe: (i) => ({
    summary: `Selfcheck: database, Temporal and worker${i.sleepSeconds ? `, ${i.sleepSeconds}s heartbeat drill` : ''}${i.fail !== 'none' ? `, ${i.fail} failure drill` : ''}`,
  }),
  retry: (p) => ({ method: 'POST', path: '/api/tasks/selfcheck', body: p }),
};

const mapColumns: TaskKindEntry<MapColumnsInput, 'mapColumnsWorkflow'> = {
  workflow: 'mapColumnsWorkflow',
  permission: 'datasets:WRITE',
  envIds: (i) => [i.envId],
  writesInto: (i) => (i.dryRun ? null : i.envId),
  dashboardIds: (i) => i.dashboardIds.map(String),
  describe: (i, names) => ({
    summary: `${i.dryRun ? 'Dry run: map' : 'Map'} column labels and descriptions of ${plural(i.datasetIds.length, 'dataset')} of ${names(i.envId)} from ${
      i.source.type === 'xlsx' ? 'a workbook' : i.source.sql ? 'a SQL Lab query' : 'the database catalog'
    }`,
    details: `Datasets: ${list(i.datasetIds)}. Overwrite existing values: ${i.overwrite ? 'yes' : 'no'}.${i.reviewedTaskId ? ` Reviewed dry run: ${i.reviewedTaskId}.` : ''}`,
  }),
  retry: (p, ids) => {
    const { dataset_ids, ...rest } = p;
    return { method: 'POST', path: '/api/datasets/map-columns', body: { ...rest, dataset_ids: numeric(ids) ?? dataset_ids } };
  },
};

const llmDocs: TaskKindEntry<LlmDocsInput, 'llmDocsWorkflow'> = {
  workflow: 'llmDocsWorkflow',
  permission: 'datasets:WRITE',
  envIds: (i) => [i.envId],
  writesInto: () => null,
  dashboardIds: (i) => i.dashboardIds.map(String),
  describe: (i, names) => ({
    summary: `Suggest documentation for ${plural(i.datasetIds.length, 'dataset')} of ${names(i.envId)} (${i.language === 'ru' ? 'Russian' : 'English'})`,
    details: `Datasets: ${list(i.datasetIds)}. LLM provider: ${i.providerId}. Suggestions wait for review; nothing is written to Superset.`,
  }),
  retry: (p, ids) => {
    const { dataset_ids, ...rest } = p;
    return { method: 'POST', path: '/api/datasets/generate-docs', body: { ...rest, dataset_ids: numeric(ids) ?? dataset_ids } };
  },
};

const gitDeploy: TaskKindEntry<GitDeployInput, 'gitDeployWorkflow'> = {
  workflow: 'gitDeployWorkflow',
  permission: 'git:WRITE',
  envIds: (i) => [...new Set([i.envId, i.targetEnvId])],
  writesInto: (i) => i.targetEnvId,
  dashboardIds: (i) => [String(i.dashboardId)],
  frozenPair: (i) =>
    i.syncedEnvId === undefined ? null : { sourceEnvId: deployRulesFrom(i.syncedEnvId, i.targetEnvId), targetEnvId: i.targetEnvId },
  describe: (i, names) => ({
    summary: `Deploy dashboard ${i.dashboardId} at ${i.commit.slice(0, 10)} into ${names(i.targetEnvId)}${i.approval?.required ? ' (needs approval)' : ''}`,
    details: `Repository ${i.dashboardUuid}, commit ${i.commit}. Overwrite: ${i.overwrite ? 'yes' : 'no'}.`,
  }),
  retry: (p) => ({
    method: 'POST',
    path: `/api/git/dashboards/${String(p.dashboard_id)}/deploy`,
    body: { env_id: p.env_id, target_env_id: p.target_env_id, commit: p.commit, overwrite: p.overwrite, db_mappings: p.db_mappings },
  }),
};

/** Started when a pull request is opened or refreshed: a dry run, nothing written into Superset. */
const gitPreview: TaskKindEntry<GitPreviewInput, 'gitPreviewWorkflow'> = {
  workflow: 'gitPreviewWorkflow',
  permission: 'pull_requests:OPEN',
  envIds: (i) => [...new Set([i.envId, i.targetEnvId])],
  writesInto: () => null,
  dashboardIds: (i) => [String(i.dashboardId)],
  frozenPair: (i) =>
    i.syncedEnvId === undefined ? null : { sourceEnvId: deployRulesFrom(i.syncedEnvId, i.targetEnvId), targetEnvId: i.targetEnvId },
  describe: (i, names) => ({
    summary: `Preview dashboard ${i.dashboardId} at ${i.commit.slice(0, 10)} against ${names(i.targetEnvId)}`,
    details: `Pull request ${i.pullRequestId}, repository ${i.dashboardUuid}, commit ${i.commit}.`,
  }),
  retry: () => null,
};

const releaseCheck: TaskKindEntry<ReleaseCheckInput, 'releaseCheckWorkflow'> = {
  workflow: 'releaseCheckWorkflow',
  permission: 'clean_release:WRITE',
  envIds: () => [],
  writesInto: () => null,
  dashboardIds: () => [],
  describe: (i) => ({
    summary: `Check release candidate ${i.candidateId}`,
    details: `Report ${i.reportId}: digests, trusted hosts and the release policy.`,
  }),
  retry: (p) => ({ method: 'POST', path: `/api/v2/clean-release/candidates/${String(p.candidate_id)}/checks`, body: {} }),
};

/** Started only by a candidate's release workflow, when a release manager publishes or revokes. */
const releasePublish: TaskKindEntry<ReleasePublishInput, 'releasePublishWorkflow'> = {
  workflow: 'releasePublishWorkflow',
  permission: 'clean_release:APPROVE',
  envIds: (i) => [i.targetEnvId],
  writesInto: (i) => i.targetEnvId,
  dashboardIds: () => [],
  describe: (i, names) => ({
    summary: `${i.mode === 'publish' ? 'Publish' : 'Revoke'} release candidate ${i.candidateId} ${i.mode === 'publish' ? 'into' : 'from'} ${names(i.targetEnvId)} (${plural(i.dashboardUuids.length, 'dashboard')})`,
    details: `Dashboards (uuids): ${list(i.dashboardUuids)}.`,
  }),
};

const datasetLaunch: TaskKindEntry<DatasetLaunchInput, 'datasetLaunchWorkflow'> = {
  workflow: 'datasetLaunchWorkflow',
  permission: 'dataset_review:LAUNCH',
  envIds: (i) => [i.envId],
  writesInto: (i) => i.envId,
  dashboardIds: (i) => i.dashboardIds.map(String),
  describe: (i, names) => ({
    summary: `Launch reviewed dataset ${i.datasetName} (${i.datasetId}) of ${names(i.envId)}`,
    details: `Review session ${i.sessionId} at version ${i.sessionVersion}, launched by ${i.launchedBy.username}: ${plural(i.columns.length, 'column')} labelled and described; the previewed query saved in SQL Lab.`,
  }),
};

/** A dry-run migration of what two environments share: what differs, dashboard by dashboard (started by a schedule). */
const driftReport: TaskKindEntry<DriftReportInput, 'driftReportWorkflow'> = {
  workflow: 'driftReportWorkflow',
  permission: 'dashboards:READ',
  envIds: (i) => [i.sourceEnvId, i.targetEnvId],
  writesInto: () => null,
  dashboardIds: () => [],
  describe: (i, names) => ({
    summary: `Drift report ${names(i.sourceEnvId)} → ${names(i.targetEnvId)}`,
    details: 'A dry-run migration of every source dashboard the target holds (by UUID); nothing is written.',
  }),
};

/** Accepting suggestions or undoing a change in a protected environment: the write waits for approval. */
const datasetChange: TaskKindEntry<DatasetChangeInput, 'datasetChangeWorkflow'> = {
  workflow: 'datasetChangeWorkflow',
  permission: 'datasets:WRITE',
  envIds: (i) => [i.envId],
  writesInto: (i) => i.envId,
  dashboardIds: () => [],
  describe: (i, names) => ({
    summary:
      i.operation.type === 'accept'
        ? `Accept ${i.operation.items ? plural(i.operation.items.length, 'suggestion') : 'every pending suggestion'} for dataset ${i.datasetId} of ${names(i.envId)}`
        : `Undo change ${i.operation.changeId} of dataset ${i.datasetId} of ${names(i.envId)}${i.operation.force ? ' (forced)' : ''}`,
    details: `Requested by ${i.actor.username ?? 'unknown'}; written into Superset once another person approves.`,
  }),
};

/** The content validator: an environment's dashboards checked with the chart checks; reads only. */
const validate: TaskKindEntry<ValidateInput, 'validateWorkflow'> = {
  workflow: 'validateWorkflow',
  permission: 'dashboards:VALIDATE',
  envIds: (i) => [i.envId],
  writesInto: () => null,
  dashboardIds: (i) => (i.selection.dashboard_ids ?? []).map(String),
  describe: (i, names) => {
    const s = i.selection;
    const what = [
      s.dashboard_ids?.length ? plural(s.dashboard_ids.length, 'dashboard') : '',
      s.tag ? `tagged '${s.tag}'` : '',
      s.owner ? `owned by ${s.owner}` : '',
    ].filter(Boolean);
    return {
      summary: `Validate ${what.length ? `dashboards (${what.join(', ')})` : 'every dashboard'} of ${names(i.envId)}${i.browser ? ' with the browser check' : ''}`,
      details: `${s.dashboard_ids?.length ? `Dashboards: ${list(s.dashboard_ids)}. ` : ''}Each chart's query run as its release's frontend sends it; nothing is written to Superset.`,
    };
  },
  retry: (p, ids) => {
    const { env_id, dashboard_ids, ...rest } = p;
    return {
      method: 'POST',
      path: `/api/environments/${encodeURIComponent(String(env_id))}/validate`,
      body: { ...rest, ...(ids ? { dashboard_ids: numeric(ids) } : dashboard_ids ? { dashboard_ids } : {}) },
    };
  },
};

const ENTRIES = {
  migration,
  backup,
  restore,
  map_columns: mapColumns,
  llm_docs: llmDocs,
  git_deploy: gitDeploy,
  git_preview: gitPreview,
  dataset_launch: datasetLaunch,
  release_check: releaseCheck,
  release_publish: releasePublish,
  drift_report: driftReport,
  dataset_change: datasetChange,
  selfcheck,
  validate,
} as const;
export type TaskKindName = keyof typeof ENTRIES;
export type TaskInputOf<K extends TaskKindName> = (typeof ENTRIES)[K] extends TaskKindEntry<infer I> ? I : never;

/**
 * Every task type: the registry's names, in its order (the OpenAPI enums and the console's filter
 * list them so), so a kind is added in one place. Every type is a kind: the kinds started only by
 * a workflow or a schedule (release_publish, drift_report) are entries like the others.
 */
export const TASK_TYPES = Object.keys(ENTRIES) as [TaskKindName, ...TaskKindName[]];
export type TaskType = TaskKindName;

/** A registered kind: its entry and its name, the task type. */
export type TaskKind<I, W extends string = string> = TaskKindEntry<I, W> & { type: TaskType };

/** Every kind by name, each entry with its name as `type` (written once, as the key). */
export const TASK_KINDS = Object.fromEntries(Object.entries(ENTRIES).map(([type, entry]) => [type, { ...entry, type }])) as {
  readonly [K in TaskKindName]: (typeof ENTRIES)[K] & { type: K };
};

/**
 * The one decider of whether a task waits for approval: it does when it writes into a protected
 * environment. `windowSeconds` is the deployment's approval window (APPROVAL_TIMEOUT_SECONDS); a
 * request may shorten it (`requestedSeconds`), never extend it.
 */
export function approvalFor<I>(
  kind: TaskKind<I>,
  input: I,
  isProtected: (envId: string) => boolean,
  requestedBy: string | null,
  windowSeconds: number,
  requestedSeconds?: number,
): TaskApproval | undefined {
  const envId = kind.writesInto(input);
  if (envId === null || !isProtected(envId)) return undefined;
  return { required: true, requestedBy, envId, timeoutSeconds: Math.min(requestedSeconds ?? windowSeconds, windowSeconds) };
}

export function retryRequestFor(type: string, params: unknown, itemIds: Array<number | string> | null) {
  const kind = (TASK_KINDS as Record<string, TaskKind<never>>)[type];
  const p = typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {};
  return kind?.retry?.(p, itemIds) ?? null;
}
