/**
 * The one decider of what rules and saved mappings a task or release applies: the snapshot
 * frozen when it was requested (contracts/env-rules.ts PairSettings), as long as the stored
 * ones still digest the same; otherwise it is stale and applies nothing.
 */
import type { PairSettings } from '../../contracts/env-rules.ts';
import { sha256Json } from '../../lib/clean-release/digest.ts';
import type { DatabaseMappingStore } from './mappings.ts';
import type { EnvironmentRuleStore } from './rules.ts';

export interface PairSettingsStores {
  environmentRules: Pick<EnvironmentRuleStore, 'rulesFor'>;
  databaseMappings: Pick<DatabaseMappingStore, 'list'>;
}

/** The pair's rules and saved mappings as stored now, with their digest. */
export async function readPairSettings(stores: PairSettingsStores, sourceEnvId: string | null, targetEnvId: string): Promise<PairSettings> {
  const [rules, rows] = sourceEnvId
    ? await Promise.all([
        stores.environmentRules.rulesFor(sourceEnvId, targetEnvId),
        stores.databaseMappings.list(sourceEnvId, targetEnvId),
      ])
    : [[], []];
  const body = {
    source_env_id: sourceEnvId,
    target_env_id: targetEnvId,
    rules: rules.map((r) => ({ id: r.id, kind: r.kind, from: r.from, to: r.to })),
    db_mappings: rows.map((r) => ({
      source_database_id: Number(r.source_database_id),
      source_database_name: r.source_database_name,
      source_database_uuid: r.source_database_uuid,
      target_database_id: Number(r.target_database_id),
    })),
  };
  return { ...body, digest: sha256Json(body) };
}

export type SettingsToApply = { settings: PairSettings } | { stale: string };

/**
 * What a run applies: `frozen` when the stored rules and mappings of the same pair still digest
 * as it does; stale otherwise. A gated run without a snapshot (requested before snapshots) is
 * stale too: nobody approved its rules. An ungated one without a snapshot reads them now.
 */
export async function settingsToApply(
  stores: PairSettingsStores,
  pair: { sourceEnvId: string | null; targetEnvId: string },
  frozen: PairSettings | undefined,
  gated: boolean,
): Promise<SettingsToApply> {
  const now = await readPairSettings(stores, pair.sourceEnvId, pair.targetEnvId);
  const named = `${pair.sourceEnvId ?? '(none)'} → ${pair.targetEnvId}`;
  if (!frozen) {
    if (!gated) return { settings: now };
    return {
      stale: `it was requested before the rules and saved database mappings of ${named} were frozen at request, so nobody approved the ones it would apply; nothing was written`,
    };
  }
  if (frozen.source_env_id !== now.source_env_id || frozen.target_env_id !== now.target_env_id)
    return {
      stale: `its rules were frozen for ${frozen.source_env_id ?? '(none)'} → ${frozen.target_env_id}, it would now apply those of ${named}; nothing was written`,
    };
  if (frozen.digest !== now.digest)
    return {
      stale: `the rules or saved database mappings of ${named} changed after it was requested (digest ${frozen.digest.slice(0, 12)}, now ${now.digest.slice(0, 12)}); nothing was written`,
    };
  return { settings: frozen };
}
