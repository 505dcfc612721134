/**
 * Owners of the dashboard, its charts and its datasets. Each source owner is mapped to the
 * target's account (username, then e-mail, never full name); copying adds the mapped accounts to
 * the target object's owners and keeps the ones it has (the importing service account among them).
 * An owner without an account in the target is reported with the next action, never created.
 */
import type { CompanionItem } from '../../../contracts/companions.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import { attempt, item, onObject, type CompanionKind, type KindResult } from './kind.ts';
import { labelOf, mapAccount, sameNameOnly, sourceAccount, type Directory } from './people.ts';
import type { UpstreamAccount } from '../../../lib/superset/types.ts';
import { counterpart } from './views.ts';
import { person, sorted, type CapturedReads, type CompanionDocuments, type Person } from './kind-documents.ts';

type Kind = 'dashboard' | 'chart' | 'dataset';

/** `companions/owners/<person>.yaml`: the account (username, e-mail, name) and what it owns, by uuid. */
export interface OwnerDoc {
  account: Person;
  dashboard: boolean;
  charts: string[];
  datasets: string[];
}

const ownersDocuments: CompanionDocuments<OwnerDoc> = {
  write: (from) => [...ownerDocs(from)],
  replay(docs, x) {
    const where = (has: (d: OwnerDoc) => boolean) => docs.filter(has).map((d) => x.ownerOf(d.account));
    x.dashboard.owners = where((d) => d.dashboard);
    for (const c of x.charts) c.owners = where((d) => d.charts.includes(String(c.uuid)));
    for (const s of x.datasets) s.owners = where((d) => d.datasets.includes(String(s.uuid)));
  },
};

/** One document per person owning the dashboard, a chart or a dataset. */
function ownerDocs({ dashboard, charts, datasets, who }: CapturedReads): Map<string, OwnerDoc> {
  const docs = new Map<string, OwnerDoc>();
  const add = (o: ObjectMeta['owners'][number], on: (d: OwnerDoc) => void) => {
    const account = who(o);
    const name = labelOf(account);
    let doc = docs.get(name);
    if (!doc) docs.set(name, (doc = { account: person(account), dashboard: false, charts: [], datasets: [] }));
    on(doc);
  };
  for (const o of dashboard.owners) add(o, (d) => (d.dashboard = true));
  for (const c of charts) for (const o of c.owners) add(o, (d) => d.charts.push(c.uuid ?? ''));
  for (const s of datasets) for (const o of s.owners) add(o, (d) => d.datasets.push(s.uuid ?? ''));
  for (const d of docs.values()) [d.charts, d.datasets] = [sorted(d.charts), sorted(d.datasets)];
  return docs;
}

export const owners: CompanionKind<'owners'> = {
  kind: 'owners',
  documents: ownersDocuments,
  async run(ctx, write): Promise<KindResult> {
    const [src, tgt, srcDir, tgtDir] = await Promise.all([ctx.sourceView(), ctx.targetView(), ctx.sourcePeople(), ctx.targetPeople()]);
    const pairs: Array<{ kind: Kind; source: ObjectMeta; target: ObjectMeta | null }> = [
      { kind: 'dashboard', source: src.dashboard, target: tgt?.dashboard ?? null },
      ...src.charts.map((c) => ({ kind: 'chart' as const, source: c, target: counterpart(tgt, 'chart', c.uuid) })),
      ...src.datasets.map((d) => ({
        kind: 'dataset' as const,
        source: d,
        target: counterpart(tgt, 'dataset', ctx.datasetUuids.get(d.uuid ?? '') ?? d.uuid),
      })),
    ];
    const items: CompanionItem[] = [];
    for (const p of pairs) {
      const on = p.kind === 'dashboard' ? undefined : onObject(p.kind, p.source.name);
      const have = new Set(p.target?.owners.map((o) => o.id) ?? []);
      const add: number[] = [];
      const adding: CompanionItem[] = [];
      const wanted = new Set<number>();
      for (const o of p.source.owners) {
        const account = sourceAccount(srcDir, o);
        const there = mapAccount(account, tgtDir);
        const name = labelOf(account);
        if (!there) {
          items.push(unmatched(name, account, tgtDir, on));
          continue;
        }
        wanted.add(there.id);
        const i = item(name, have.has(there.id) ? 'unchanged' : 'create', { ...(on ? { on } : {}), target_id: there.id });
        items.push(i);
        if (i.action === 'create') {
          add.push(there.id);
          adding.push(i);
        }
      }
      for (const o of p.target?.owners ?? []) {
        if (wanted.has(o.id)) continue;
        const known = tgtDir.accounts.find((a) => a.id === o.id);
        items.push(item(known ? labelOf(known) : `${o.first_name ?? ''} ${o.last_name ?? ''}`.trim(), 'only_in_target', on ? { on } : {}));
      }
      if (write && p.target && add.length) {
        const target = p.target;
        await attempt(adding, () => ctx.target.meta.set(p.kind, target.id, { owners: [...have, ...add] }));
      }
    }
    return { items };
  },
};

/** An owner the target has no account for by username or e-mail: named, with the next action; a same-named account is said, never made an owner. */
function unmatched(name: string, account: UpstreamAccount, tgtDir: Directory, on: string | undefined): CompanionItem {
  const namesake = sameNameOnly(account, tgtDir);
  if (!namesake)
    return item(name, 'missing', {
      ...(on ? { on } : {}),
      note: 'no account in the target with this username or e-mail',
      next_action: createUser(name),
    });
  const other = labelOf(namesake);
  return item(name, 'missing', {
    ...(on ? { on } : {}),
    note: `no account in the target with this username or e-mail; account '${other}' has the same full name, which is not matched (anyone can take a name)`,
    next_action: {
      action: 'map_user',
      description: `If '${other}' in the target is the same person as '${name}', give that account the source's username or e-mail (Settings → List Users); otherwise create the account '${name}'. Then migrate the dashboard again to make it an owner there`,
    },
  });
}

function createUser(name: string) {
  return {
    action: 'create_user',
    description: `Create the account '${name}' in the target Superset (Settings → List Users), then migrate the dashboard again to make it an owner there`,
  };
}
