/**
 * Certification (`certified_by`, `certification_details`) of the dashboard and its charts. Every
 * release's bundle carries it (4.1 to 6.1 export both fields), so an import brings it; this kind
 * checks that the target holds it after the import and writes it where it does not (an existing
 * chart Superset's dashboard import kept as it was, for one). Datasets keep theirs in `extra`,
 * which the bundle carries too.
 */
import type { CompanionItem } from '../../../contracts/companions.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import { attempt, item, onObject, type CompanionKind, type KindResult } from './kind.ts';
import { counterpart } from './views.ts';

export const certification: CompanionKind<'certification'> = {
  kind: 'certification',
  async run(ctx, write): Promise<KindResult> {
    const [src, tgt] = await Promise.all([ctx.sourceView(), ctx.targetView()]);
    const pairs: Array<{ kind: 'dashboard' | 'chart'; source: ObjectMeta; target: ObjectMeta | null }> = [
      { kind: 'dashboard', source: src.dashboard, target: tgt?.dashboard ?? null },
      ...src.charts.map((c) => ({ kind: 'chart' as const, source: c, target: counterpart(tgt, 'chart', c.uuid) })),
    ];
    const items: CompanionItem[] = [];
    for (const p of pairs) {
      const certified = p.source.certified_by || p.target?.certified_by;
      // Not in the target yet: the import carries it.
      if (!certified || !p.target) continue;
      const fields = (['certified_by', 'certification_details'] as const).filter((f) => (p.source[f] ?? '') !== (p.target![f] ?? ''));
      const on = p.kind === 'dashboard' ? {} : { on: onObject('chart', p.source.name) };
      const i = item(p.source.certified_by || '(not certified)', fields.length ? 'update' : 'unchanged', {
        ...on,
        ...(fields.length ? { fields } : {}),
      });
      items.push(i);
      if (!write || !fields.length) continue;
      const target = p.target;
      await attempt([i], () =>
        ctx.target.meta.set(p.kind, target.id, {
          certified_by: p.source.certified_by ?? '',
          certification_details: p.source.certification_details ?? '',
        }),
      );
    }
    return { items };
  },
};
