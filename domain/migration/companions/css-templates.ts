/**
 * The CSS template a dashboard was built from. Superset records no link: choosing a template
 * copies its CSS into the dashboard's own `css` (which the bundle carries). So the source's
 * templates whose CSS the dashboard's CSS holds are its templates; matched by name in the target.
 */
import type { CompanionItem } from '../../../contracts/companions.ts';
import { attempt, item, type CompanionKind, type KindResult } from './kind.ts';
import type { CssTemplate } from '../../../lib/superset/resources/css-templates.ts';
import { answer, type CompanionDocuments } from './kind-documents.ts';

/** `companions/css_templates/<name>.yaml`: a template the dashboard's CSS holds. */
const cssTemplatesDocuments: CompanionDocuments<Pick<CssTemplate, 'template_name' | 'css'>> = {
  write: ({ recording, names }) =>
    (answer<CssTemplate[]>(recording, 'cssTemplates', 'list') ?? [])
      .filter((t) => names.has(t.template_name))
      .map((t) => [t.template_name, { template_name: t.template_name, css: t.css }] as const),
  replay(docs, x) {
    x.set(
      'cssTemplates',
      'list',
      [],
      docs.map((t, i) => ({ ...t, id: i + 1 })),
    );
  },
};

export const cssTemplates: CompanionKind<'css_templates'> = {
  kind: 'css_templates',
  documents: cssTemplatesDocuments,
  reads: ['cssTemplates'],
  lists: ['cssTemplates.list'],
  async run(ctx, write): Promise<KindResult> {
    const src = await ctx.sourceView();
    const css = (src.dashboard.css ?? '').trim();
    if (!css) return { items: [] };
    const used = (await ctx.source.cssTemplates.list()).filter((t) => t.css.trim() && css.includes(t.css.trim()));
    if (!used.length) return { items: [] };
    const theirs = await ctx.target.cssTemplates.list();
    const items: CompanionItem[] = [];
    for (const t of used) {
      const there = theirs.find((x) => x.template_name === t.template_name);
      const action = !there ? 'create' : there.css.trim() === t.css.trim() ? 'unchanged' : 'update';
      const i = item(t.template_name, action, { target_id: there?.id ?? null, ...(action === 'update' ? { fields: ['css'] } : {}) });
      items.push(i);
      if (!write || action === 'unchanged') continue;
      const body = { template_name: t.template_name, css: t.css };
      await attempt([i], () => (there ? ctx.target.cssTemplates.update(there.id, body) : ctx.target.cssTemplates.create(body)));
    }
    return { items };
  },
};
