/**
 * Custom tags on the dashboard and its charts, by name. Copying tags the target objects with the
 * source's tags (a tag the target lacks is created with the source's description) and keeps the
 * tags they have. Superset's implicit `type:`/`owner:` tags are never compared.
 */
import type { CompanionItem } from '../../../contracts/companions.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { Tag } from '../../../lib/superset/resources/tags.ts';
import { attempt, item, onObject, type CompanionKind, type KindResult } from './kind.ts';
import { counterpart } from './views.ts';
import { answer, sorted, type CompanionDocuments } from './kind-documents.ts';

/** `companions/tags/<tag>.yaml`: a custom tag, its description and what carries it, by uuid. */
export interface TagDoc {
  name: string;
  description: string | null;
  dashboard: boolean;
  charts: string[];
}

const tagsDocuments: CompanionDocuments<TagDoc> = {
  write({ recording, dashboard, charts }) {
    const described = new Map((answer<Tag[]>(recording, 'tags', 'list') ?? []).map((t) => [t.name, t.description]));
    return sorted([...dashboard.tags, ...charts.flatMap((c) => c.tags)]).map((name) => [
      name,
      {
        name,
        description: described.get(name) ?? null,
        dashboard: dashboard.tags.includes(name),
        charts: sorted(charts.filter((c) => c.tags.includes(name)).map((c) => c.uuid ?? '')),
      },
    ]);
  },
  replay(docs, x) {
    x.dashboard.tags = docs.filter((t) => t.dashboard).map((t) => t.name);
    for (const c of x.charts) c.tags = docs.filter((t) => t.charts.includes(String(c.uuid))).map((t) => t.name);
    x.set(
      'tags',
      'list',
      [],
      docs.map((t, i) => ({ id: i + 1, name: t.name, description: t.description })),
    );
  },
};

export const tags: CompanionKind<'tags'> = {
  kind: 'tags',
  documents: tagsDocuments,
  reads: ['tags'],
  lists: ['tags.list'],
  async run(ctx, write): Promise<KindResult> {
    const [src, tgt] = await Promise.all([ctx.sourceView(), ctx.targetView()]);
    const pairs: Array<{ kind: 'dashboard' | 'chart'; source: ObjectMeta; target: ObjectMeta | null }> = [
      { kind: 'dashboard', source: src.dashboard, target: tgt?.dashboard ?? null },
      ...src.charts.map((c) => ({ kind: 'chart' as const, source: c, target: counterpart(tgt, 'chart', c.uuid) })),
    ];
    if (!pairs.some((p) => p.source.tags.length || p.target?.tags.length)) return { items: [] };
    const [sourceTags, targetTags] = await Promise.all([ctx.source.tags.list(), ctx.target.tags.list()]);
    const described = new Map<string, Tag>(sourceTags.map((t) => [t.name, t]));
    const existing = new Set(targetTags.map((t) => t.name));
    const items: CompanionItem[] = [];
    for (const p of pairs) {
      const on = p.kind === 'dashboard' ? {} : { on: onObject('chart', p.source.name) };
      const have = new Set(p.target?.tags ?? []);
      const adding: CompanionItem[] = [];
      for (const name of p.source.tags) {
        const i = item(name, have.has(name) ? 'unchanged' : 'create', on);
        if (i.action === 'create' && !existing.has(name)) i.note = 'a new tag in the target';
        items.push(i);
        if (i.action === 'create') adding.push(i);
      }
      for (const name of have) if (!p.source.tags.includes(name)) items.push(item(name, 'only_in_target', on));
      if (!write || !p.target || !adding.length) continue;
      const target = p.target;
      for (const i of adding.filter((x) => !existing.has(x.name))) {
        // A tag new in the target is created with the source's description, on this object.
        await attempt([i], () =>
          ctx.target.tags.create({ name: i.name, description: described.get(i.name)?.description ?? null }, [[p.kind, target.id]]),
        );
        if (i.done) existing.add(i.name);
      }
      const rest = adding.filter((x) => !x.done && !x.error);
      if (rest.length)
        await attempt(rest, () =>
          ctx.target.tags.tagObject(
            p.kind,
            target.id,
            rest.map((x) => x.name),
          ),
        );
    }
    return { items };
  },
};
