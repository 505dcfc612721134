import path from 'node:path';
import { Context } from '@temporalio/activity';
import { activityPort } from '../activity-port.ts';
import type { CompanionRequest } from '../../contracts/companions.ts';
import type { PairSettings } from '../../contracts/env-rules.ts';
import { deployRulesFrom, type GitDeployInput, type GitDeployItem } from '../../contracts/git.ts';
import { settingsToApply } from '../../db/environments/pair-settings.ts';
import { aggregateFields } from '../../contracts/migration.ts';
import { exportFromFiles } from '../../lib/git/dashboard-files.ts';
import { WorkingCopy } from '../../lib/git/working-copy.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { itemFailure } from '../../domain/failures/index.ts';
import { bundleSource, importPrepared, prepareDashboard, TargetIndex, upstreamFor } from '../../domain/migration/index.ts';
import { currentTaskId } from '../task-context.ts';
import { checkDeployCompanions, redeployActions, type DeployCompanions } from './deploy-companions.ts';
import { deployActions, mappingsFor } from './mappings.ts';

type DeployItem = GitDeployItem & { chart_uuids: string[] };

/** A commit's files as the deploy reads them, and where the repository's dashboard was synced from. */
interface CommitFiles {
  files: Map<string, string>;
  syncedEnvId: string | null;
}

/**
 * Imports the dashboard as it is at the pinned commit through the migration path (database
 * remapping, collision pre-resolution, version-skew stripping, intent rows). Reading a commit
 * changes nothing and the import is idempotent, so a retry is safe. A refusal is the item's
 * outcome; a Superset outage is thrown for Temporal to retry.
 */
export async function deployDashboardCommit(deps: ActivityDeps, input: GitDeployInput): Promise<DeployItem> {
  const { log } = Context.current();
  const beat = setInterval(() => Context.current().heartbeat(), 3000);
  const item: DeployItem = {
    kind: 'repository',
    id: input.dashboardUuid,
    title: null,
    status: 'failed',
    outcome: 'failed',
    next_actions: [],
    dashboard_uuid: input.dashboardUuid,
    commit: input.commit,
    target_env_id: input.targetEnvId,
    target_dashboard_id: null,
    chart_uuids: [],
  };
  const at = { step: 'read' };
  try {
    const read = await readCommit(deps, input);
    if ('error' in read) return { ...item, step: 'read', error: read.error };
    return await deployFiles(deps, input, item, read, at);
  } catch (err) {
    // The one failure classification: an outage is thrown back for a retry, a refusal is this item's outcome.
    const failure = itemFailure(err, {
      step: at.step,
      item: `dashboard ${input.dashboardUuid} at ${input.commit.slice(0, 10)}`,
      envId: input.targetEnvId,
    });
    log.error(`deploy of ${input.dashboardUuid} failed at ${at.step}: ${failure.error}`);
    return { ...item, ...failure };
  } finally {
    clearInterval(beat);
  }
}

/** The commit's files from the dashboard's working copy (under its shared lock), or why there are none. */
async function readCommit(deps: ActivityDeps, input: GitDeployInput): Promise<CommitFiles | { error: string }> {
  const repos = deps.stores.gitRepositories;
  const reposDir = deps.config.GIT_REPOS_DIR ?? path.join(deps.config.SWITCHYARD_DATA_DIR, 'git');
  const row = await repos.get(input.dashboardUuid);
  const wc = new WorkingCopy(path.join(reposDir, input.dashboardUuid));
  if (!row || !wc.exists()) return { error: `the repository of dashboard ${input.dashboardUuid} no longer exists` };
  const files = await repos.withLock([input.dashboardUuid], 'shared', () => wc.filesAt(input.commit));
  if (![...files.keys()].some((f) => f.startsWith('dashboards/')))
    return { error: `commit ${input.commit.slice(0, 10)} holds no dashboard (sync and commit it first)` };
  return { files, syncedEnvId: row.synced_env_id };
}

/** Plans the commit's dashboard against the target and imports it; `at` follows the step for the caller's failure. */
async function deployFiles(
  deps: ActivityDeps,
  input: GitDeployInput,
  item: DeployItem,
  read: CommitFiles,
  at: { step: string },
): Promise<DeployItem> {
  const { log } = Context.current();
  // The repository holds the dashboard as the environment it was synced from has it: that pair's rules apply, as frozen at request.
  const applied = await appliedSettings(deps, input, read);
  if ('stale' in applied) return staleDeploy(input, item, applied.stale);
  const plan = await planDeploy(deps, input, read, applied.settings, at);
  const { prepared } = plan;
  const base = {
    ...item,
    title: prepared.title,
    chart_uuids: prepared.chartUuids,
    objects: prepared.objects,
    database_mappings: prepared.databaseMappings,
    collisions: prepared.collisions,
    ...(prepared.envRules.length ? { env_rules: prepared.envRules } : {}),
  };
  if (prepared.blocked) {
    log.warn(`deploy blocked: ${prepared.blocked.error}`);
    return {
      ...base,
      status: prepared.blocked.status,
      outcome: prepared.blocked.status,
      step: 'plan',
      error: prepared.blocked.error,
      next_actions: deployActions(input, prepared.blocked.next_actions),
    };
  }
  for (const c of prepared.collisions) log.warn(`collision: ${c.detail}; ${c.resolution}`);
  return await importWithCompanions(deps, input, base, read, plan, at);
}

/** What the deploy plans with, and the plan of the commit's dashboard against the target. */
interface DeployPlan {
  source: ReturnType<typeof bundleSource>;
  target: Awaited<ReturnType<typeof upstreamFor>>;
  index: TargetIndex;
  mappings: Map<number, number>;
  envRules: PairSettings['rules'];
  prepared: Awaited<ReturnType<typeof prepareDashboard>>;
}

/** The commit's dashboard planned against the target: databases remapped, collisions found, the pair's rules applied. */
async function planDeploy(
  deps: ActivityDeps,
  input: GitDeployInput,
  read: CommitFiles,
  settings: PairSettings,
  at: { step: string },
): Promise<DeployPlan> {
  const envRules = settings.rules;
  const source = bundleSource(exportFromFiles(read.files), maxBundleBytes(deps));
  const target = await upstreamFor(deps, input.targetEnvId);
  // Built fresh for each deploy: a deploy is one dashboard, and the target changes between deploys.
  const index = await TargetIndex.build(target);
  const mappings = await mappingsFor(deps, input, source.databases, read.syncedEnvId, settings.db_mappings, target);
  Context.current().log.info(`deploying ${input.dashboardUuid} at ${input.commit.slice(0, 10)} into ${input.targetEnvId}`);
  const prepared = await prepareDashboard({
    source,
    target,
    index,
    sourceEnvId: read.syncedEnvId ?? input.envId,
    targetEnvId: input.targetEnvId,
    dashboardId: input.dashboardId,
    overwrite: input.overwrite,
    mappings,
    envRules,
    progress: at,
    maxBundleBytes: maxBundleBytes(deps),
  });
  return { source, target, index, mappings, envRules, prepared };
}

/** The planned dashboard's companions checked, then (unless a preview or a strict kind differs) the import and the companions written. */
async function importWithCompanions(
  deps: ActivityDeps,
  input: GitDeployInput,
  base: DeployItem,
  read: CommitFiles,
  plan: DeployPlan,
  at: { step: string },
): Promise<DeployItem> {
  const { log } = Context.current();
  const { source, target, index, mappings, envRules, prepared } = plan;
  at.step = 'companions';
  const companions = await checkDeployCompanions({
    ...{ deps, files: read.files, databases: source.databases, sourceLabel: `git:${input.dashboardUuid}@${input.commit.slice(0, 10)}` },
    ...{ targetEnvId: input.targetEnvId, companions: input.companions, mappings, envRules, subject: prepared, log },
  });
  const withCompanions = { ...base, companions: companions.reports, ...(companions.note ? { companions_note: companions.note } : {}) };
  if (companions.blocked) return beforeImport(input, withCompanions, companions);
  // A preview names the target's copy it would replace (none for a first deploy): what the validator last found of it goes beside the preview.
  if (input.dryRun) return beforeImport(input, { ...withCompanions, target_dashboard_id: await copyOf(index, prepared) }, companions);
  at.step = 'import';
  const r = await importPrepared({
    intents: deps.stores.migrationItems,
    taskId: currentTaskId(),
    sourceDashboardId: input.dashboardId,
    target,
    prepared,
    ...{ learned: [], overwrite: input.overwrite, activity: activityPort() },
  });
  log.info(`imported '${prepared.title}' at ${input.commit.slice(0, 10)} as dashboard ${r.targetDashboardId} of ${input.targetEnvId}`);
  const done = { ...withCompanions, target_dashboard_id: r.targetDashboardId, dropped_fields: aggregateFields(r.dropped) };
  at.step = 'companions';
  const refused = await companions.apply(r.targetDashboardId);
  if (refused.length) {
    const error = `deployed, but some of its companions were not written: ${refused.join('; ')}`;
    log.error(error);
    return { ...done, status: 'deployed_with_errors', outcome: 'failed', step: 'companions', error };
  }
  return { ...done, status: 'deployed', outcome: 'succeeded', next_actions: [...done.next_actions, ...companions.next_actions] };
}

/** The target's copy of the dashboard, which a deploy would replace (null for a first deploy): the plan's index knows it already. */
async function copyOf(index: TargetIndex, prepared: { dashboardUuid: string }): Promise<number | null> {
  return (await index.dashboard(prepared.dashboardUuid))?.id ?? null;
}

/** A deploy that ends before the import: a strict companion kind differs, or a preview (what the import would do, nothing written). */
function beforeImport(input: GitDeployInput, item: DeployItem, c: DeployCompanions): DeployItem {
  if (c.blocked) return companionsBlocked(input, item, c);
  Context.current().log.info(`preview of ${item.dashboard_uuid} at ${item.commit.slice(0, 10)}: planned, nothing imported`);
  return { ...item, status: 'planned', outcome: 'succeeded' };
}

/** The rules and saved mappings from the environment the repository was synced from, as frozen at request (or why not). */
function appliedSettings(deps: ActivityDeps, input: GitDeployInput, read: CommitFiles) {
  const pair = { sourceEnvId: deployRulesFrom(read.syncedEnvId, input.targetEnvId), targetEnvId: input.targetEnvId };
  return settingsToApply(deps.stores, pair, input.frozen, input.approval?.required === true);
}

/** The rules or mappings changed after the deploy was requested (and approved): nothing deployed, the same deploy offered again. */
function staleDeploy(input: GitDeployInput, item: DeployItem, why: string): DeployItem {
  Context.current().log.warn(`deploy refused as stale: ${why}`);
  return {
    ...item,
    step: 'rules',
    error: `the deploy is stale: ${why}`,
    next_actions: [
      {
        action: 'request_again',
        description: 'Request the deploy again, so that the rules and mappings it applies are the ones its approver sees',
        request: {
          method: 'POST',
          path: `/api/git/dashboards/${input.dashboardId}/deploy`,
          body: { env_id: input.envId, target_env_id: input.targetEnvId, commit: input.commit, overwrite: input.overwrite },
        },
      },
    ],
  };
}

/** A strict companion kind differs between the commit and the target: nothing imported, the deploys that would go on offered. */
function companionsBlocked(input: GitDeployInput, item: DeployItem, c: DeployCompanions): DeployItem {
  const again = (companions: CompanionRequest) => ({
    method: 'POST',
    path: `/api/git/dashboards/${input.dashboardId}/deploy`,
    body: { env_id: input.envId, target_env_id: input.targetEnvId, commit: input.commit, overwrite: input.overwrite, companions },
  });
  return {
    ...item,
    status: 'failed',
    outcome: 'failed',
    step: 'companions',
    code: c.blocked!.code,
    error: c.blocked!.error.replace('nothing was imported', 'nothing was deployed'),
    next_actions: [...redeployActions(c.blocked!.kinds, input.companions, again), ...c.next_actions],
  };
}

/** Records which commit went live where (idempotent per task). */
export async function recordGitDeployment(
  deps: Pick<ActivityDeps, 'stores'>,
  input: {
    dashboardUuid: string;
    envId: string;
    commit: string;
    targetDashboardId: number | null;
    deployedBy: string | null;
    approvedBy: string | null;
  },
): Promise<void> {
  await deps.stores.gitRepositories.recordDeployment({
    dashboard_uuid: input.dashboardUuid,
    env_id: input.envId,
    commit: input.commit,
    target_dashboard_id: input.targetDashboardId,
    task_id: currentTaskId(),
    deployed_by: input.deployedBy,
    approved_by: input.approvedBy,
  });
}
