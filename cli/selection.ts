/** Which dashboards a command acts on: ids, titles, a search, or every dashboard of the environment. */
import { unwrap, type Api } from './api.ts';
import { CliError, EXIT } from './exit-codes.ts';

export interface Selection {
  dashboards?: number[];
  title?: string[];
  search?: string;
  all?: boolean;
}

type Row = { id: number; title: string };

/** Every dashboard the search matches (all of them without one), a page of 100 at a time. */
async function listAll(api: Api, env_id: string, search?: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (let page = 1; ; page++) {
    const query = { env_id, page, page_size: 100, override_show_all: true, ...(search ? { search } : {}) };
    const r = await unwrap(api.client.GET('/api/dashboards', { params: { query: query as never } }));
    rows.push(...r.items.map((d) => ({ id: d.id, title: d.title })));
    if (!r.has_next) return rows;
  }
}

/** The ids selected, in order and without repeats; nothing selected, an unknown or ambiguous title is a usage error. */
export async function selectDashboards(api: Api, env_id: string, sel: Selection): Promise<number[]> {
  const ids = [...(sel.dashboards ?? [])];
  if (sel.all || sel.search !== undefined) ids.push(...(await listAll(api, env_id, sel.all ? undefined : sel.search)).map((d) => d.id));
  for (const title of sel.title ?? []) {
    const hits = (await listAll(api, env_id, title)).filter((d) => d.title.trim().toLowerCase() === title.trim().toLowerCase());
    if (hits.length !== 1)
      throw new CliError(
        hits.length
          ? `the title '${title}' names ${hits.length} dashboards (ids ${hits.map((d) => d.id).join(', ')}): give --dashboards`
          : `no dashboard titled '${title}'`,
        EXIT.USAGE,
      );
    ids.push(hits[0]!.id);
  }
  if (!sel.dashboards && !sel.title && !sel.all && sel.search === undefined)
    throw new CliError('select dashboards: --dashboards <ids>, --title <title>, --search <text> or --all', EXIT.USAGE);
  if (!ids.length) throw new CliError('the selection matched no dashboard', EXIT.USAGE);
  return [...new Set(ids)];
}
