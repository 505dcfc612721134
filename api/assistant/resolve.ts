/**
 * Entity resolution: names the parser read, matched against the environments and the Superset
 * content the caller can see, through the same Superset access the other routes use. A name
 * that matches nothing or several things becomes a question (Clarification), never a guess.
 */
import { lexicon } from '../../lib/assistant/lexicon.ts';
import { normaliseText } from '../../lib/assistant/normalise.ts';
import type { Language, ObjectRef } from '../../lib/assistant/intent.ts';
import { ambiguousText, notFoundText, TEXTS } from '../../lib/assistant/texts.ts';
import type { Supersets } from '../environments/upstream.ts';

/** Thrown while resolving: the answer becomes `needs_clarification` with this text and data. */
export class Clarification extends Error {
  readonly data: Record<string, unknown>;
  constructor(text: string, data: Record<string, unknown>) {
    super(text);
    this.data = data;
  }
}

export interface EnvRef {
  id: string;
  name: string;
}

export interface DashboardRef {
  id: number;
  title: string;
  slug: string | null;
}

export interface DatasetRef {
  id: number;
  table_name: string;
}

const MAX_CANDIDATES = 10;
/** Most objects one command may name, and the longest name looked up (Superset pages hold 100). */
export const MAX_OBJECTS = 100;
export const MAX_NAME = 250;

/** Refuses, as a question, more objects or longer names than one lookup can take. */
export function checkRefs(lang: Language, refs: readonly ObjectRef[]): void {
  if (refs.length > MAX_OBJECTS) throw new Clarification(TEXTS.tooMany[lang](MAX_OBJECTS), { too_many: refs.length });
  if (refs.some((r) => typeof r === 'string' && r.length > MAX_NAME))
    throw new Clarification(TEXTS.tooLong[lang](MAX_NAME), { too_long: true });
}
const MAX_KNOWN = 20;

/** An environment by id, exact name, or an alias / name part (`прод` → `acc-prod`) when only one fits. */
export function resolveEnvironment(lang: Language, mention: string, envs: readonly EnvRef[]): EnvRef {
  const m = normaliseText(mention);
  const exact = envs.filter((e) => e.id.toLowerCase() === m || normaliseText(e.name) === m);
  if (exact.length === 1) return exact[0]!;
  // "прод", "production" and an environment named "acc-prod" all mean prod.
  const aliases = lexicon().envAliases;
  const canonical = (w: string) => aliases.get(w) ?? w;
  const wanted = canonical(m);
  const partial = exact.length
    ? exact
    : envs.filter((e) => {
        const name = normaliseText(e.name);
        return canonical(name) === wanted || name.split(/[-_ ./]+/).some((part) => canonical(part) === wanted);
      });
  if (partial.length === 1) return partial[0]!;
  if (partial.length > 1) {
    throw new Clarification(
      ambiguousText(
        lang,
        'environment',
        mention,
        partial.slice(0, MAX_CANDIDATES).map((e) => e.name),
      ),
      { ambiguous: 'environment', mention, candidates: partial.slice(0, MAX_CANDIDATES) },
    );
  }
  throw new Clarification(
    notFoundText(
      lang,
      'environment',
      mention,
      envs.slice(0, MAX_KNOWN).map((e) => e.name),
    ),
    { not_found: 'environment', mention },
  );
}

const candidatesOf = (rows: DashboardRef[]) =>
  rows.slice(0, MAX_CANDIDATES).map((d) => `#${d.id} ${d.title}${d.slug ? ` (${d.slug})` : ''}`);

/** Dashboards of an environment by id, title or slug; each name must pick exactly one. */
export async function resolveDashboards(lang: Language, supersets: Supersets, envId: string, refs: ObjectRef[]): Promise<DashboardRef[]> {
  checkRefs(lang, refs);
  return supersets.use(envId, async (client) => {
    const out: DashboardRef[] = [];
    const ids = refs.filter((r): r is number => typeof r === 'number');
    if (ids.length) {
      const res = await client.listDashboards({ filters: [{ col: 'id', opr: 'in', value: ids }], page: 0, pageSize: ids.length });
      const byId = new Map(res.result.map((d) => [d.id, d]));
      for (const id of ids) {
        const d = byId.get(id);
        if (!d) throw new Clarification(notFoundText(lang, 'dashboard', String(id)), { not_found: 'dashboard', mention: id });
        out.push({ id: d.id, title: d.dashboard_title ?? '', slug: d.slug ?? null });
      }
    }
    for (const name of refs.filter((r): r is string => typeof r === 'string')) {
      const res = await client.listDashboards({
        filters: [{ col: 'dashboard_title', opr: 'title_or_slug', value: name }],
        page: 0,
        pageSize: 25,
      });
      const rows: DashboardRef[] = res.result.map((d) => ({ id: d.id, title: d.dashboard_title ?? '', slug: d.slug ?? null }));
      const wanted = normaliseText(name);
      const exact = rows.filter(
        (d) => normaliseText(d.title) === wanted || (d.slug !== null && d.slug.toLowerCase() === name.toLowerCase()),
      );
      const pick = exact.length ? exact : rows;
      if (pick.length === 1) out.push(pick[0]!);
      else if (pick.length > 1)
        throw new Clarification(ambiguousText(lang, 'dashboard', name, candidatesOf(pick)), {
          ambiguous: 'dashboard',
          mention: name,
          candidates: pick.slice(0, MAX_CANDIDATES),
        });
      else throw new Clarification(notFoundText(lang, 'dashboard', name), { not_found: 'dashboard', mention: name });
    }
    const seen = new Set<number>();
    return out.filter((d) => !seen.has(d.id) && seen.add(d.id));
  });
}

/** Datasets of an environment by id or table name. */
export async function resolveDatasets(lang: Language, supersets: Supersets, envId: string, refs: ObjectRef[]): Promise<DatasetRef[]> {
  checkRefs(lang, refs);
  return supersets.use(envId, async (client) => {
    const out: DatasetRef[] = [];
    const ids = refs.filter((r): r is number => typeof r === 'number');
    if (ids.length) {
      const res = await client.listDatasets({ filters: [{ col: 'id', opr: 'in', value: ids }], page: 0, pageSize: ids.length });
      const byId = new Map(res.result.map((d) => [d.id, d]));
      for (const id of ids) {
        const d = byId.get(id);
        if (!d) throw new Clarification(notFoundText(lang, 'dataset', String(id)), { not_found: 'dataset', mention: id });
        out.push({ id: d.id, table_name: d.table_name });
      }
    }
    for (const name of refs.filter((r): r is string => typeof r === 'string')) {
      const res = await client.listDatasets({ filters: [{ col: 'table_name', opr: 'ct', value: name }], page: 0, pageSize: 25 });
      const rows: DatasetRef[] = res.result.map((d) => ({ id: d.id, table_name: d.table_name }));
      const exact = rows.filter((d) => d.table_name.toLowerCase() === name.toLowerCase());
      const pick = exact.length ? exact : rows;
      if (pick.length === 1) out.push(pick[0]!);
      else if (pick.length > 1)
        throw new Clarification(
          ambiguousText(
            lang,
            'dataset',
            name,
            pick.slice(0, MAX_CANDIDATES).map((d) => `#${d.id} ${d.table_name}`),
          ),
          { ambiguous: 'dataset', mention: name, candidates: pick.slice(0, MAX_CANDIDATES) },
        );
      else throw new Clarification(notFoundText(lang, 'dataset', name), { not_found: 'dataset', mention: name });
    }
    const seen = new Set<number>();
    return out.filter((d) => !seen.has(d.id) && seen.add(d.id));
  });
}
