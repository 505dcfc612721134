/**
 * Impact before a change: what uses a database, table, dataset, column or metric in an
 * environment and in the environments it migrates to. "Migrates to" is the pairs Switchyard keeps
 * settings for: every environment this one has saved database mappings or per-environment rules
 * into (db/environments). There the same object is found the way a migration carries it: a
 * dataset by its uuid, a database by the pair's saved mapping (else by name), a schema through
 * the pair's schema rules; a table, column and metric keep their names.
 */
import type { DatabaseMappingStore } from '../../db/environments/mappings.ts';
import type { EnvironmentRuleStore } from '../../db/environments/rules.ts';
import type { EnvironmentStore } from '../../db/environments/store.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { analyseImpact } from '../../lib/impact/analyse.ts';
import type { ImpactFindings, ImpactTarget, Inventory } from '../../lib/impact/types.ts';
import type { Supersets } from '../environments/upstream.ts';
import { readInventory } from './inventory.ts';

export interface EnvironmentImpact extends ImpactFindings {
  env_id: string;
  env_name: string;
  /** The target as this environment names it. */
  target: ImpactTarget;
  checked_at: string;
  unreadable: Inventory['unreadable'];
  truncated: Inventory['truncated'];
  /** Every kind was read whole and every SQL parsed: nothing here may use the target unseen. */
  complete: boolean;
}

export interface MigratedImpact {
  env_id: string;
  env_name: string;
  /** How Switchyard knows this environment as one this one migrates to. */
  via: Array<'database_mappings' | 'environment_rules'>;
  /** Absent when the target is not in that environment or it could not be read. */
  impact: EnvironmentImpact | null;
  /** Why there is no impact: the object is not there, or the environment could not be read (with Superset's message). */
  note: string | null;
}

export interface ImpactAnswer extends EnvironmentImpact {
  migrates_to: MigratedImpact[];
}

export interface ImpactDeps {
  supersets: Supersets;
  stores: { environments: EnvironmentStore; databaseMappings: DatabaseMappingStore; environmentRules: EnvironmentRuleStore };
}

function envImpact(env: { id: string; name: string }, target: ImpactTarget, inv: Inventory, checkedAt: Date): EnvironmentImpact {
  const findings = analyseImpact(inv, target);
  return {
    env_id: env.id,
    env_name: env.name,
    target,
    checked_at: checkedAt.toISOString(),
    ...findings,
    unreadable: inv.unreadable,
    truncated: inv.truncated,
    complete: inv.unreadable.length === 0 && inv.truncated.length === 0 && findings.unparsed.length === 0,
  };
}

export class ImpactService {
  private readonly deps: ImpactDeps;
  constructor(deps: ImpactDeps) {
    this.deps = deps;
  }

  /** The impact here only (no environments migrated to): what a confirmation shows before a write. */
  async here(envId: string, target: ImpactTarget): Promise<EnvironmentImpact> {
    return (await this.readHere(envId, target)).impact;
  }

  /** The impact of each of several datasets here, from one read of the environment (a task over many datasets). */
  async hereEach(envId: string, datasetIds: number[]): Promise<EnvironmentImpact[]> {
    return this.deps.supersets.use(envId, async (client, env) => {
      const checkedAt = new Date();
      const inv = await readInventory(client, {});
      return datasetIds.map((dataset) => envImpact(env, { dataset }, inv, checkedAt));
    });
  }

  /** The impact here and in every environment this one migrates to. */
  async impact(envId: string, target: ImpactTarget): Promise<ImpactAnswer> {
    const here = await this.readHere(envId, target);
    const targets = await this.targetsOf(envId);
    const migrates_to = await Promise.all(targets.map((t) => this.inTarget(envId, t.id, t.via, target, here.inv)));
    return { ...here.impact, migrates_to };
  }

  private readHere(envId: string, target: ImpactTarget): Promise<{ impact: EnvironmentImpact; inv: Inventory }> {
    return this.deps.supersets.use(envId, async (client, env) => {
      const checkedAt = new Date();
      const inv = await readInventory(client, target);
      if (
        target.dataset !== undefined &&
        !inv.unreadable.some((u) => u.kind === 'datasets') &&
        !inv.datasets.some((d) => d.id === target.dataset)
      ) {
        throw new NotFoundError(`Dataset ${target.dataset} in environment '${env.name}'`);
      }
      return { impact: envImpact(env, target, inv, checkedAt), inv };
    });
  }

  private async targetsOf(envId: string): Promise<Array<{ id: string; via: MigratedImpact['via'] }>> {
    const [mapped, ruled] = await Promise.all([
      this.deps.stores.databaseMappings.targetsOf(envId),
      this.deps.stores.environmentRules.targetsOf(envId),
    ]);
    const ids = [...new Set([...mapped, ...ruled])].filter((id) => id !== envId).sort();
    return ids.map((id) => ({
      id,
      via: [...(mapped.includes(id) ? ['database_mappings' as const] : []), ...(ruled.includes(id) ? ['environment_rules' as const] : [])],
    }));
  }

  private async inTarget(
    sourceId: string,
    targetId: string,
    via: MigratedImpact['via'],
    target: ImpactTarget,
    source: Inventory,
  ): Promise<MigratedImpact> {
    const env = await this.deps.stores.environments.get(targetId);
    const [mappings, rules] = await Promise.all([
      this.deps.stores.databaseMappings.list(sourceId, targetId),
      this.deps.stores.environmentRules.rulesFor(sourceId, targetId),
    ]);
    let note: string | null = null;
    try {
      const impact = await this.deps.supersets.use(targetId, async (client) => {
        const checkedAt = new Date();
        let translated: ImpactTarget | null = null;
        const inv = await readInventory(client, (listed) => {
          const t = translateTarget(target, source, listed, mappings, rules);
          if ('missing' in t) note = t.missing;
          else translated = t.target;
          return translated;
        });
        return translated ? envImpact(env, translated, inv, checkedAt) : null;
      });
      return { env_id: env.id, env_name: env.name, via, impact, note };
    } catch (err) {
      // One environment migrated to that cannot be read is named with its reason; the others still answer.
      const extra = (err as { extra?: { upstream_detail?: string } }).extra;
      return {
        env_id: env.id,
        env_name: env.name,
        via,
        impact: null,
        note: `could not be read: ${extra?.upstream_detail ?? (err as Error).message}`,
      };
    }
  }
}

type Mapping = { source_database_id: number; target_database_id: number };
type Rule = { kind: string; from: string; to: string };

/** The target as an environment migrated to names it; `missing` when that environment has no such object. */
export function translateTarget(
  target: ImpactTarget,
  source: Pick<Inventory, 'databases' | 'datasets'>,
  there: Pick<Inventory, 'databases' | 'datasets'>,
  mappings: Mapping[],
  rules: Rule[],
): { target: ImpactTarget } | { missing: string } {
  const out: ImpactTarget = { ...target };
  if (target.dataset !== undefined) {
    const uuid = source.datasets.find((d) => d.id === target.dataset)?.uuid;
    const match = uuid ? there.datasets.find((d) => d.uuid === uuid) : undefined;
    if (!match) return { missing: `dataset ${target.dataset} (uuid ${uuid ?? 'unknown'}) is not there` };
    out.dataset = match.id;
  }
  if (target.database !== undefined) {
    const db = source.databases.find((d) => String(d.id) === target.database || d.name.toLowerCase() === target.database!.toLowerCase());
    const mapped = db ? mappings.find((m) => Number(m.source_database_id) === db.id) : undefined;
    const named = db ? there.databases.find((d) => d.name === db.name) : undefined;
    const id = mapped ? Number(mapped.target_database_id) : named?.id;
    if (id === undefined)
      return { missing: `database ${target.database} has no saved mapping into it and no database of the same name is there` };
    out.database = String(id);
  }
  if (target.schema !== undefined) {
    const rule = rules.find((r) => r.kind === 'schema' && r.from === target.schema);
    if (rule) out.schema = rule.to;
  }
  return { target: out };
}
