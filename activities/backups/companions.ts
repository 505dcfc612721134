/**
 * Companion assets in backups (see domain/migration/companions/). A backup keeps the dashboard's
 * companions (its owners, roles, tags, reports, annotation layers, CSS templates, saved queries,
 * theme, embedded config) as documents, one YAML per companion, the very documents its repository
 * would hold (docs/git.md, Companions; ../../domain/migration/companions/documents.ts): format 2,
 * `companions/kinds.yaml` with `version: 2` and the rest under `companions/` in the bundle, at the
 * paths a repository uses, so the one reader reads both. Certification is in the dashboard's and
 * charts' own files. A restore replays the documents, with the bundle's files, as the kinds' source
 * and the environment as their target, exactly as a git deploy does, so what was deleted since is
 * put back by name (reports as they were, not paused). Roles are checked first: one the
 * environment no longer has stops the restore before anything is imported. Superset's importer
 * reads only its own folders, but a restore takes the documents out before importing all the same.
 * Backups made before keep a recording instead (format 1): ./companions-v1.ts reads them.
 */
import type { Context } from '@temporalio/activity';
import { COMPANION_KINDS, type CompanionKindReport, type CompanionModes } from '../../contracts/companions.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import type { Bundle } from '../../lib/bundles/bundle.ts';
import { fromYaml, isCompanionPath, toYaml } from '../../lib/git/dashboard-files.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import {
  applyCompanions,
  captureCompanions,
  type CapturedKinds,
  checkCompanions,
  type CompanionScope,
  type CompanionSubject,
  KINDS_FILE,
  markNotCaptured,
  REPLAYED_DASHBOARD_ID,
  replayClient,
  replayOf,
  type Request,
} from '../../domain/migration/index.ts';
import { type CompanionsV1, replayV1, takeCompanionsV1 } from './companions-v1.ts';

/** The format a backup keeps its companions in: the documents (1 was a recording of client calls, ./companions-v1.ts). */
export const COMPANIONS_FORMAT = 2;

/** What a backup kept of its dashboard's companions, by format; format 2's files are the documents and the bundle's own, as YAML. */
export type KeptCompanions = { format: 1; v1: CompanionsV1 } | { format: 2; files: Map<string, string> };

function subjectOf(bundle: Bundle, title: string): CompanionSubject {
  const uuids = bundle.of('datasets').map((f) => String(f.content.uuid));
  return {
    dashboardUuid: String(bundle.of('dashboards')[0]?.content.uuid ?? ''),
    title,
    datasets: uuids.map((u) => ({ sourceUuid: u, targetUuid: u })),
  };
}

/** Each dataset's database uuid, as the bundle's dataset files say: how the documents name a query's or an alert's database. */
function datasetDatabases(bundle: Bundle): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of bundle.of('datasets'))
    if (typeof f.content.uuid === 'string' && typeof f.content.database_uuid === 'string') out[f.content.uuid] = f.content.database_uuid;
  return out;
}

/** Keeps the dashboard's companions in the bundle as documents (format 2); how many companions the kinds found. */
export async function attachCompanions(client: SupersetClient, dashboardId: number, bundle: Bundle, title: string): Promise<number> {
  const subject = { dashboardUuid: subjectOf(bundle, title).dashboardUuid, title, datasetDatabases: datasetDatabases(bundle) };
  const captured = await captureCompanions(client, dashboardId, subject);
  keepDocuments(bundle, captured.files);
  return captured.items;
}

/** The companion documents (path → YAML) into the bundle at their own paths, kinds.yaml marked with the format. */
export function keepDocuments(bundle: Bundle, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    const content = fromYaml(text);
    // The format is the backup's: a repository's kinds.yaml has no version (adding one would change every repository's bytes).
    if (path === KINDS_FILE) content.version = COMPANIONS_FORMAT;
    bundle.files.set(path, { path, kind: 'other', content });
  }
}

/**
 * The companions a backup kept, taken out of the bundle (either format); null for a backup made
 * before they were kept; `unreadable` for documents of a format this release does not read (a
 * backup made by a later one), which a restore refuses rather than drop them.
 */
export function takeCompanions(bundle: Bundle): KeptCompanions | { unreadable: string } | null {
  const v1 = takeCompanionsV1(bundle);
  const paths = [...bundle.files.keys()].filter(isCompanionPath);
  if (!paths.length) return v1 ? { format: 1, v1 } : null;
  const version = bundle.files.get(KINDS_FILE)?.content.version;
  const files = new Map(paths.map((p) => [p, toYaml(bundle.files.get(p)!.content)]));
  for (const p of paths) bundle.files.delete(p);
  if (version !== COMPANIONS_FORMAT)
    return {
      unreadable: `the backup keeps its companions in format ${JSON.stringify(version ?? null)} (${KINDS_FILE}), which this release does not read (it reads 1 and ${COMPANIONS_FORMAT}); restore it with the release that made it`,
    };
  // The replay reads the dashboard, its charts and datasets from the bundle's own files, as a deploy reads a commit's.
  for (const f of [...bundle.of('dashboards'), ...bundle.of('charts'), ...bundle.of('datasets')]) files.set(f.path, toYaml(f.content));
  return { format: 2, files };
}

/** The kept companions as the kinds' source: the source client, the dashboard's id in it, its database ids → the environment's. */
interface Replayed {
  source: SupersetClient;
  dashboardId: number;
  mappings: Map<number, number>;
  /** Format 2: per kind, `captured` or why the environment would not show it when backed up. */
  kinds?: CapturedKinds;
}

/** The replay of either format; format 2 numbers the documents' databases (named by uuid) as the environment does now. */
async function replayed(client: SupersetClient, kept: KeptCompanions): Promise<Replayed> {
  if (kept.format === 1) return replayV1(kept.v1);
  // Read at each phase: the import may have re-created a database. One the environment lacks is unmapped: its companion is named missing.
  const databases = (await client.databases.list()).flatMap((d) => (d.uuid ? [{ id: d.id, uuid: d.uuid }] : []));
  const replay = replayOf(kept.files, databases);
  if (!replay) throw new Error(`the backup's companion documents hold no ${KINDS_FILE} or the bundle no dashboard: nothing to replay`);
  const mappings = new Map(databases.map((d) => [d.id, d.id]));
  return { source: replayClient(replay.recording), dashboardId: REPLAYED_DASHBOARD_ID, mappings, kinds: replay.kinds };
}

const ALL_COPY = Object.fromEntries(COMPANION_KINDS.map((k) => [k, 'copy'])) as CompanionModes;

function scopeOf(client: SupersetClient, envId: string, from: Replayed, log: Context['log']): CompanionScope {
  // Reports are put back as they were (active included, pause_reports false): the backup is this environment's own earlier
  // state, a restore is refused into any other, and pausing would stop the very mailing it puts back. Nothing else widens:
  // an embedded list of "any domain" and a differing same-named rule are named, not applied (no request option here).
  const input = {
    sourceEnvId: envId,
    targetEnvId: envId,
    dbMappings: [],
    overwrite: true,
    dryRun: false,
    companions: { ...ALL_COPY, pause_reports: false },
  } satisfies Request;
  return {
    svc: { deps: { superset: async () => client } },
    input,
    mappings: from.mappings,
    log,
    clients: { source: from.source, target: client },
  };
}

/** The kept companions compared with the environment; a kind the backup could not read is named so (format 2 says why). */
async function compared(client: SupersetClient, envId: string, kept: KeptCompanions, bundle: Bundle, title: string, log: Context['log']) {
  const from = await replayed(client, kept);
  const scope = scopeOf(client, envId, from, log);
  const subject = subjectOf(bundle, title);
  const check = await checkCompanions(scope, from.dashboardId, subject);
  if (from.kinds) markNotCaptured(check.reports, from.kinds, 'the backup');
  return { scope, subject, check, dashboardId: from.dashboardId };
}

/** Before the import: the kept companions compared with the environment; a role it no longer has stops the restore. */
export async function checkKeptCompanions(
  client: SupersetClient,
  envId: string,
  kept: KeptCompanions,
  bundle: Bundle,
  title: string,
  log: Context['log'],
): Promise<{ reports: CompanionKindReport[]; missingRoles: string[]; next_actions: NextAction[] }> {
  const { check } = await compared(client, envId, kept, bundle, title, log);
  const missingRoles = check.reports
    .filter((r) => r.kind === 'roles')
    .flatMap((r) => r.items.filter((i) => i.action === 'missing').map((i) => i.name));
  return { reports: check.reports, missingRoles, next_actions: check.next_actions };
}

/** After the import: the kept companions put back; the writes Superset refused. */
export async function putBackCompanions(
  client: SupersetClient,
  envId: string,
  kept: KeptCompanions,
  bundle: Bundle,
  title: string,
  log: Context['log'],
): Promise<{ reports: CompanionKindReport[]; refused: string[]; next_actions: NextAction[] }> {
  const { scope, subject, check, dashboardId } = await compared(client, envId, kept, bundle, title, log);
  // A restore always imports first: what the import undoes (a chart's annotation layer entries) is put back too.
  const refused = await applyCompanions(scope, dashboardId, subject, check, true);
  return { reports: check.reports, refused, next_actions: check.next_actions };
}
