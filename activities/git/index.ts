import path from 'node:path';
import { Context } from '@temporalio/activity';
import { exportFromFiles } from '../../lib/git/dashboard-files.ts';
import { WorkingCopy } from '../../lib/git/working-copy.ts';
import type { GitDeployInput, GitDeployItem } from '../../contracts/git.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import { maxBundleBytes, type ActivityDeps } from '../deps.ts';
import { itemFailure } from '../item-failure.ts';
import { importPrepared } from '../migration/apply.ts';
import { bundleSource } from '../migration/bundle-source.ts';
import { prepareDashboard } from '../migration/plan.ts';
import { upstreamFor } from '../migration/superset-upstream.ts';
import { TargetIndex } from '../migration/target-index.ts';
import type { MigrationUpstream, UpstreamDatabase } from '../migration/upstream.ts';
import { currentTaskId } from '../task-context.ts';

export function createGitActivities(deps: ActivityDeps) {
  const repos = deps.stores.gitRepositories;
  const reposDir = () => deps.config.GIT_REPOS_DIR ?? path.join(deps.config.SWITCHYARD_DATA_DIR, 'git');

  return {
    /**
     * Imports the dashboard as it is at the pinned commit through the migration path (database
     * remapping, collision pre-resolution, version-skew stripping, intent rows). Reading a commit
     * changes nothing and the import is idempotent, so a retry is safe. A refusal is the item's
     * outcome; a Superset outage is thrown for Temporal to retry.
     */
    async deployDashboardCommit(input: GitDeployInput): Promise<GitDeployItem & { chart_uuids: string[] }> {
      const { log } = Context.current();
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      const item: GitDeployItem & { chart_uuids: string[] } = {
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
        const row = await repos.get(input.dashboardUuid);
        const wc = new WorkingCopy(path.join(reposDir(), input.dashboardUuid));
        if (!row || !wc.exists())
          return { ...item, step: 'read', error: `the repository of dashboard ${input.dashboardUuid} no longer exists` };
        const files = await repos.withLock([input.dashboardUuid], 'shared', () => wc.filesAt(input.commit));
        if (![...files.keys()].some((f) => f.startsWith('dashboards/')))
          return { ...item, step: 'read', error: `commit ${input.commit.slice(0, 10)} holds no dashboard (sync and commit it first)` };
        const zip = exportFromFiles(files);
        const source = bundleSource(zip, maxBundleBytes(deps));
        const target = await upstreamFor(deps, input.targetEnvId);
        // Built fresh for each deploy: a deploy is one dashboard, and the target changes between deploys.
        const index = await TargetIndex.build(target);
        const mappings = await mappingsFor(deps, input, source.databases, row.synced_env_id, target);
        log.info(`deploying ${input.dashboardUuid} at ${input.commit.slice(0, 10)} into ${input.targetEnvId}`);
        const prepared = await prepareDashboard({
          source,
          target,
          index,
          sourceEnvId: row.synced_env_id ?? input.envId,
          targetEnvId: input.targetEnvId,
          dashboardId: input.dashboardId,
          overwrite: input.overwrite,
          mappings,
          progress: at,
          maxBundleBytes: maxBundleBytes(deps),
        });
        const base = {
          ...item,
          title: prepared.title,
          chart_uuids: prepared.chartUuids,
          objects: prepared.objects,
          database_mappings: prepared.databaseMappings,
          collisions: prepared.collisions,
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
        at.step = 'import';
        const r = await importPrepared({
          intents: deps.stores.migrationItems,
          taskId: currentTaskId(),
          sourceDashboardId: input.dashboardId,
          target,
          prepared,
          learned: [],
          overwrite: input.overwrite,
        });
        log.info(
          `imported '${prepared.title}' at ${input.commit.slice(0, 10)} as dashboard ${r.targetDashboardId} of ${input.targetEnvId}`,
        );
        return { ...base, status: 'deployed', outcome: 'succeeded', target_dashboard_id: r.targetDashboardId, dropped_fields: r.dropped };
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
    },

    /** Records which commit went live where (idempotent per task). */
    async recordGitDeployment(input: {
      dashboardUuid: string;
      envId: string;
      commit: string;
      targetDashboardId: number | null;
      deployedBy: string | null;
      approvedBy: string | null;
    }): Promise<void> {
      await repos.recordDeployment({
        dashboard_uuid: input.dashboardUuid,
        env_id: input.envId,
        commit: input.commit,
        target_dashboard_id: input.targetDashboardId,
        task_id: currentTaskId(),
        deployed_by: input.deployedBy,
        approved_by: input.approvedBy,
      });
    },
  };
}

/**
 * The repository's databases → target database ids: a mapping sent with the deploy, else the
 * same UUID in the target (a database created by an earlier import keeps its UUID), else the
 * mapping saved for the environment the dashboard was synced from. Never by name alone: a
 * same-named database in the target may be anything.
 */
async function mappingsFor(
  deps: ActivityDeps,
  input: GitDeployInput,
  databases: UpstreamDatabase[],
  syncedEnvId: string | null,
  target: MigrationUpstream,
): Promise<Map<number, number>> {
  const targetDbs = await target.listDatabases();
  let saved = new Map<string, number>(); // source database uuid → target id
  if (syncedEnvId && syncedEnvId !== input.targetEnvId) {
    const rows = await deps.stores.databaseMappings.list(syncedEnvId, input.targetEnvId);
    if (rows.length) {
      const sourceDbs = await (await upstreamFor(deps, syncedEnvId)).listDatabases().catch(() => [] as UpstreamDatabase[]);
      const uuidById = new Map(sourceDbs.map((d) => [d.id, d.uuid]));
      saved = new Map(
        rows.map((r) => [
          uuidById.get(Number(r.source_database_id)) ?? '',
          Number(r.target_database_id),
        ]),
      );
    }
  }
  const m = new Map<number, number>();
  for (const d of databases) {
    const sent = input.dbMappings.find(
      (x) => (x.database_uuid && x.database_uuid === d.uuid) || (x.database_name && x.database_name === d.database_name),
    );
    const id = sent?.target_database_id ?? targetDbs.find((t) => t.uuid === d.uuid)?.id ?? saved.get(d.uuid);
    if (id !== undefined) m.set(d.id, id);
  }
  return m;
}

function deployActions(input: GitDeployInput, planned: NextAction[]): NextAction[] {
  if (!planned.some((a) => a.action === 'map_database')) return planned;
  return [
    {
      action: 'retry_with_mapping',
      description: 'Deploy again naming the target database of each unmapped database (by name or UUID as the repository has it)',
      request: {
        method: 'POST',
        path: `/api/git/dashboards/${input.dashboardId}/deploy`,
        body: {
          env_id: input.envId,
          target_env_id: input.targetEnvId,
          commit: input.commit,
          db_mappings: [{ database_name: '<database name in the repository>', target_database_id: '<target database id>' }],
        },
      },
    },
  ];
}
