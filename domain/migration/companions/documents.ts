/**
 * The recorded reads of a dashboard's companions → one YAML per companion under `companions/`, the
 * documents a repository (docs/git.md) and a backup (format 2, activities/backups/companions.ts)
 * keep; ./documents-replay.ts reads them back. Each kind's module writes its own (its `documents`,
 * ./kind-documents.ts); this file walks the registry. Shared by both, so a field a kind adds travels
 * in both (and their tests: test/git/companion-files.test.ts, test/backups/companion-format.test.ts):
 *
 *   companions/kinds.yaml                      per kind: `captured`, or why it could not be read
 *   companions/owners/<person>.yaml            the account (username, e-mail, name) and what it owns, by uuid
 *   companions/roles/<role>.yaml               a dashboard role, by name
 *   companions/tags/<tag>.yaml                 a custom tag, its description and what carries it, by uuid
 *   companions/reports/<name>.yaml             an alert or report: dashboard, chart and database by uuid, owners by person
 *   companions/annotation_layers/<name>.yaml   a layer the charts draw, its annotations, and the id the charts' params name it by
 *   companions/css_templates/<name>.yaml       a template the dashboard's CSS holds
 *   companions/saved_queries/<label>.yaml      a query behind a dataset, its database by uuid
 *   companions/themes/<uuid>.yaml              the dashboard's theme
 *   companions/embedded/<uuid>.yaml            its embedded configuration (allowed domains)
 *
 * Certification is not here: the dashboard's and charts' files carry it. Everything is sorted and
 * holds no numeric id of the environment but the one the bundle's chart params already name.
 */
import type { CompanionKindName } from '../../../contracts/companions.ts';
import { COMPANIONS_DIR, fileNameOf, toYaml } from '../../../lib/git/dashboard-files.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { UpstreamAccount } from '../../../lib/superset/types.ts';
import { answer, type CapturedReads } from './kind-documents.ts';
import { COMPANION_KIND_MODULES } from './kinds.ts';
import { type Directory, sourceAccount } from './people.ts';
import type { Recording } from './recording-key.ts';

/** Per kind: `captured`, or why the environment would not show it. */
export type CapturedKinds = Record<CompanionKindName, string>;
export const KINDS_FILE = `${COMPANIONS_DIR}/kinds.yaml`;

interface Inputs {
  recording: Recording;
  dashboardId: number;
  kinds: CapturedKinds;
  /** The names each kind's items gave (which templates and queries are the dashboard's). */
  names: Map<CompanionKindName, Set<string>>;
  databases: Map<number, string>;
}

/** The recording → `path → YAML` of every companion file. */
export function companionDocs(i: Inputs): Record<string, string> {
  const out: Record<string, string> = { [KINDS_FILE]: toYaml({ kinds: i.kinds }) };
  const put = (kind: string, name: string, doc: unknown) => {
    let path = `${COMPANIONS_DIR}/${kind}/${fileNameOf(name)}.yaml`;
    for (let n = 2; out[path] !== undefined; n++) path = `${COMPANIONS_DIR}/${kind}/${fileNameOf(`${name} ${n}`)}.yaml`;
    out[path] = toYaml(doc);
  };
  const from = capturedReads(i);
  if (!from) return out;
  for (const k of COMPANION_KIND_MODULES) {
    if (!k.documents || i.kinds[k.kind] !== 'captured') continue;
    for (const [name, doc] of k.documents.write({ ...from, names: i.names.get(k.kind) ?? new Set() })) put(k.kind, name, doc);
  }
  return out;
}

/** What every kind's writer reads of the recording: the dashboard, its charts and datasets, the source's accounts; undefined without the dashboard. */
function capturedReads(i: Inputs): Omit<CapturedReads, 'names'> | undefined {
  const r = i.recording;
  const dashboard = answer<ObjectMeta>(r, 'meta', 'get', 'dashboard', i.dashboardId);
  if (!dashboard) return undefined;
  const charts = (answer<Array<{ id: number }>>(r, 'dashboards', 'charts', i.dashboardId) ?? []).flatMap(
    (c) => answer<ObjectMeta>(r, 'meta', 'get', 'chart', c.id) ?? [],
  );
  const datasets = (answer<Array<{ id: number }>>(r, 'dashboards', 'datasets', i.dashboardId) ?? []).flatMap(
    (d) => answer<ObjectMeta>(r, 'meta', 'get', 'dataset', d.id) ?? [],
  );
  const dir: Directory = { accounts: answer<{ accounts: UpstreamAccount[] }>(r, 'users', 'all')?.accounts ?? [] };
  return {
    recording: r,
    dashboardId: i.dashboardId,
    dashboard,
    charts,
    datasets,
    databases: i.databases,
    who: (o) => sourceAccount(dir, o),
  };
}
