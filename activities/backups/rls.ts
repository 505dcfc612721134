/**
 * Row-level-security rules in backups. No export carries them, so a backup keeps the rules that
 * touch its datasets in `row_level_security.yaml` beside the bundle's files (tables by dataset
 * uuid, roles by name), and a restore puts them back by name. Superset's importer ignores a file
 * outside its folders, but a restore removes it before importing all the same.
 */
import type { Bundle } from '../../lib/bundles/bundle.ts';
import type { RlsBackup, RlsRuleView } from '../../contracts/rls.ts';
import { datasetsOf, type MigrationUpstream, rulesOnDatasets, TargetIndex, withDescriptions } from '../../domain/migration/index.ts';

export const RLS_FILE = 'row_level_security.yaml';

/** Adds the rules on the bundle's datasets to the bundle; how many. No file when there are none (the content hash stays that of the bare export). */
export async function attachRules(upstream: MigrationUpstream, bundle: Bundle, index?: TargetIndex): Promise<number> {
  if (!bundle.of('datasets').length) return 0;
  index ??= await TargetIndex.build(upstream, { kinds: ['dataset'] });
  const rules = await withDescriptions(upstream, await rulesOnDatasets(index, datasetsOf(bundle)));
  if (!rules.length) return 0;
  const content: RlsBackup = { version: 1, rules };
  bundle.files.set(RLS_FILE, { path: RLS_FILE, kind: 'other', content: content as unknown as Record<string, unknown> });
  return rules.length;
}

/** The rules a backup kept, taken out of the bundle (none for a backup made before rules were kept). */
export function takeRules(bundle: Bundle): RlsRuleView[] {
  const file = bundle.files.get(RLS_FILE);
  if (!file) return [];
  bundle.files.delete(RLS_FILE);
  const rules = (file.content as Partial<RlsBackup>).rules;
  if (!Array.isArray(rules)) return [];
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return rules
    .filter((r): r is RlsRuleView => typeof r === 'object' && r !== null && typeof (r as RlsRuleView).name === 'string')
    .map((r) => ({
      name: r.name,
      filter_type: str(r.filter_type),
      clause: str(r.clause),
      group_key: typeof r.group_key === 'string' && r.group_key ? r.group_key : null,
      description: typeof r.description === 'string' ? r.description : null,
      roles: Array.isArray(r.roles) ? r.roles.map(String) : [],
      tables: Array.isArray(r.tables)
        ? r.tables.map((t) => ({ dataset_uuid: str(t?.dataset_uuid), table_name: str(t?.table_name) })).filter((t) => t.dataset_uuid)
        : [],
    }));
}
