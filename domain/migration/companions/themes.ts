/**
 * The dashboard's theme (Superset 6.0+), by uuid and content. The bundle carries it, but
 * Superset's dashboard import never overwrites a theme the target has (`overwrite=False`), so an
 * edit made in the source after the first migration would never arrive: copying updates the
 * target's theme of that uuid through the theme API (or creates it, uuid kept) and points the
 * target dashboard at it. A target release without themes is reported unavailable, the theme
 * named as dropped with a next action.
 */
import { isDeepStrictEqual } from 'node:util';
import type { NextAction } from '../../../contracts/outcomes.ts';
import { SupersetNotFoundError } from '../../../lib/superset/errors.ts';
import type { Theme } from '../../../lib/superset/resources/themes.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { attempt, item, type CompanionKind, type KindResult } from './kind.ts';
import { answer, type CompanionDocuments } from './kind-documents.ts';

const UPGRADE: NextAction = {
  action: 'upgrade_target_superset',
  description:
    "The target's Superset release has no themes (they came with 6.0): upgrade it, then migrate again; until then the dashboard shows the target's default theme",
};

/** Theme configurations compared as JSON (key order and spacing are Superset's, not the theme's). */
function sameConfig(a: string, b: string): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(a), JSON.parse(b));
  } catch {
    // expected: a configuration that is not JSON is compared as text.
    return a === b;
  }
}

/**
 * The dashboard's theme id from its view: by id, or by the uuid its export names among `listed`
 * (the environment's themes); asked apart only when the view says neither (what an older backup
 * recorded) or names a theme the list lacks.
 */
function themeOf(client: SupersetClient, dashboard: ObjectMeta, listed: readonly Theme[] = []): Promise<number | null> {
  if (dashboard.theme_id !== undefined) return Promise.resolve(dashboard.theme_id);
  if (dashboard.theme_uuid === null) return Promise.resolve(null);
  const byUuid = dashboard.theme_uuid !== undefined ? listed.find((t) => t.uuid === dashboard.theme_uuid) : undefined;
  return byUuid ? Promise.resolve(byUuid.id) : client.themes.ofDashboard(dashboard.id);
}

/** The source dashboard's theme among the source's themes; undefined when it has none, a string naming one the source does not list. */
async function sourceThemeOf(client: SupersetClient, dashboard: ObjectMeta): Promise<Theme | string | undefined> {
  if (dashboard.theme_id === null || dashboard.theme_uuid === null) return undefined;
  // By id (a detail read), by uuid (an export read), or asked apart (a view that says neither: an older backup's).
  const named = dashboard.theme_id ?? dashboard.theme_uuid ?? (await client.themes.ofDashboard(dashboard.id));
  if (named === null) return undefined;
  return (await client.themes.list()).find((t) => t.id === named || t.uuid === named) ?? `theme ${named}`;
}

/** `companions/themes/<uuid>.yaml`: the dashboard's theme, its configuration's keys sorted. */
export type ThemeDoc = Omit<Theme, 'id'>;

const themesDocuments: CompanionDocuments<ThemeDoc> = {
  write({ recording, dashboard }) {
    const id = dashboard.theme_id ?? answer<number | null>(recording, 'themes', 'ofDashboard', dashboard.id) ?? null;
    const t = (answer<Theme[]>(recording, 'themes', 'list') ?? []).find((x) => x.id === id);
    return t ? [[t.uuid, { uuid: t.uuid, theme_name: t.theme_name, json_data: canonicalJson(t.json_data) }]] : [];
  },
  replay(docs, x) {
    x.dashboard.theme_id = docs.length ? 1 : null;
    x.set(
      'themes',
      'list',
      [],
      docs.map((t, i) => ({ ...t, id: i + 1 })),
    );
  },
};

export const themes: CompanionKind<'themes'> = {
  kind: 'themes',
  documents: themesDocuments,
  reads: ['themes'],
  lists: ['themes.list'],
  // Importing over a dashboard that is linked to a theme the target has leaves it unlinked (seen on 6.1.0: a
  // release published twice): the link is compared again after every import and put back.
  undoneByImport: true,
  async run(ctx, write): Promise<KindResult> {
    // The theme's id comes with the dashboard's view, which the other kinds read anyway.
    const theme = await sourceThemeOf(ctx.source, (await ctx.sourceView()).dashboard);
    if (theme === undefined) return { items: [] };
    if (typeof theme === 'string')
      return { items: [item(theme, 'missing', { note: 'the dashboard names a theme the source does not list' })] };
    let theirs: Theme[];
    try {
      theirs = await ctx.target.themes.list();
    } catch (err) {
      if (!(err instanceof SupersetNotFoundError)) throw err;
      const note = `dropped: the target has no theme API (${err.message.slice(0, 200)}); the dashboard arrives without its theme`;
      return {
        unavailable: "the target's Superset release has no themes",
        items: [item(theme.theme_name, 'missing', { note, next_action: UPGRADE })],
      };
    }
    const there = theirs.find((t) => t.uuid === theme.uuid) ?? null;
    const tgt = await ctx.targetView();
    const linked = tgt ? await themeOf(ctx.target, tgt.dashboard, theirs) : null;
    const fields = there
      ? [
          ...(there.theme_name !== theme.theme_name ? ['theme_name'] : []),
          ...(sameConfig(there.json_data, theme.json_data) ? [] : ['json_data']),
          ...(tgt && linked !== there.id ? ['dashboard.theme'] : []),
        ]
      : [];
    const i = item(theme.theme_name, !there ? 'create' : fields.length ? 'update' : 'unchanged', {
      target_id: there?.id ?? null,
      note: `uuid ${theme.uuid}`,
      ...(fields.length ? { fields } : {}),
    });
    if (write && i.action !== 'unchanged') {
      await attempt([i], async () => {
        if (!there) await ctx.target.themes.importOne(theme);
        else if (fields.includes('theme_name') || fields.includes('json_data')) await ctx.target.themes.update(there.id, theme);
        const id = there?.id ?? (await ctx.target.themes.list()).find((t) => t.uuid === theme.uuid)?.id;
        if (id === undefined) throw new Error(`the theme import answered, but the target lists no theme of uuid ${theme.uuid}`);
        if (tgt && linked !== id) await ctx.target.themes.link(tgt.dashboard.id, id);
        return id;
      });
    }
    return { items: [i] };
  },
};

/** A theme's configuration with its keys sorted (Superset keeps the text as it was saved). */
function canonicalJson(text: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)), null, 2);
  } catch {
    // expected: a configuration that is not JSON is written as Superset keeps it.
    return text;
  }
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}
