import type { FrozenDbMapping } from '../../contracts/env-rules.ts';
import type { GitDeployInput } from '../../contracts/git.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import type { ActivityDeps } from '../deps.ts';
import { type MigrationUpstream, type UpstreamDatabase, upstreamFor } from '../../domain/migration/index.ts';

/**
 * The repository's databases → target database ids: a mapping sent with the deploy, else the
 * same UUID in the target (a database created by an earlier import keeps its UUID), else the
 * mapping saved for the environment the dashboard was synced from (`rows`, as frozen with the task). Never by name alone: a
 * same-named database in the target may be anything.
 */
export async function mappingsFor(
  deps: ActivityDeps,
  input: GitDeployInput,
  databases: UpstreamDatabase[],
  syncedEnvId: string | null,
  rows: FrozenDbMapping[],
  target: MigrationUpstream,
): Promise<Map<number, number>> {
  const targetDbs = await target.listDatabases();
  let saved = new Map<string, number>(); // source database uuid → target id
  if (syncedEnvId && syncedEnvId !== input.targetEnvId) {
    if (rows.length) {
      const sourceDbs = await (await upstreamFor(deps, syncedEnvId)).listDatabases().catch((err: unknown): UpstreamDatabase[] => {
        // The saved mappings name the synced environment's databases by id: without its list only UUIDs pair them.
        deps.logger.warn(
          `environment ${syncedEnvId}'s databases could not be listed (${(err as Error).message}): its saved mappings are not used`,
        );
        return [];
      });
      const uuidById = new Map(sourceDbs.map((d) => [d.id, d.uuid]));
      saved = new Map(rows.map((r) => [uuidById.get(Number(r.source_database_id)) ?? '', Number(r.target_database_id)]));
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

/** What a blocked deploy offers: a database to map becomes a deploy again with `db_mappings`. */
export function deployActions(input: GitDeployInput, planned: NextAction[]): NextAction[] {
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
