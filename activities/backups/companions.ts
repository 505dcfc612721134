/**
 * Companion assets in backups (see domain/migration/companions/). A backup records
 * what the companion kinds read of the dashboard's environment (its owners, roles, tags, reports,
 * annotation layers, CSS templates, saved queries, certification, theme, embedded config) and keeps that recording in
 * `companions.yaml` beside the bundle's files; a restore runs the same kinds with the recording as
 * their source and the environment as their target, so what was deleted since is put back by name
 * (reports as they were, not paused). Roles are checked first: one the environment no longer has
 * stops the restore before anything is imported. Superset's importer ignores a file outside its
 * folders, but a restore removes it before importing all the same.
 */
import type { Context } from '@temporalio/activity';
import { COMPANION_KINDS, type CompanionKindReport, type CompanionModes } from '../../contracts/companions.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import type { Bundle } from '../../lib/bundles/bundle.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { SupersetForbiddenError, SupersetNotFoundError } from '../../lib/superset/errors.ts';
import {
  applyCompanions,
  checkCompanions,
  COMPANION_KIND_MODULES,
  companionContext,
  type CompanionScope,
  type CompanionSubject,
  type Recording,
  recordingClient,
  replayClient,
  type Request,
} from '../../domain/migration/index.ts';

export const COMPANIONS_FILE = 'companions.yaml';

interface CompanionsBackup {
  version: 1;
  /** The dashboard's id when it was backed up: the recording's reads name it. */
  dashboard_id: number;
  recording: Recording;
}

/** A database id is itself in its own environment. */
class SameIds extends Map<number, number> {
  override get(id: number): number {
    return id;
  }
}

function subjectOf(bundle: Bundle, title: string): CompanionSubject {
  const uuids = bundle.of('datasets').map((f) => String(f.content.uuid));
  return {
    dashboardUuid: String(bundle.of('dashboards')[0]?.content.uuid ?? ''),
    title,
    datasets: uuids.map((u) => ({ sourceUuid: u, targetUuid: u })),
  };
}

/** Records the dashboard's companions into the bundle; how many there are. */
export async function attachCompanions(client: SupersetClient, dashboardId: number, bundle: Bundle, title: string): Promise<number> {
  const recording: Recording = {};
  const subject = subjectOf(bundle, title);
  const ctx = companionContext({
    source: recordingClient(client, recording),
    target: client,
    sourceDashboardId: dashboardId,
    dashboardUuid: subject.dashboardUuid,
    title,
    datasetUuids: new Map(),
    mappings: new SameIds(),
    pauseReports: false,
    activity: {},
  });
  let count = 0;
  for (const kind of COMPANION_KIND_MODULES) {
    try {
      count += (await kind.run(ctx, false)).items.length;
    } catch (err) {
      if (!(err instanceof SupersetNotFoundError || err instanceof SupersetForbiddenError)) throw err;
    }
  }
  const content: CompanionsBackup = { version: 1, dashboard_id: dashboardId, recording };
  bundle.files.set(COMPANIONS_FILE, { path: COMPANIONS_FILE, kind: 'other', content: content as unknown as Record<string, unknown> });
  return count;
}

/** The companions a backup kept, taken out of the bundle (none for a backup made before they were kept). */
export function takeCompanions(bundle: Bundle): CompanionsBackup | null {
  const file = bundle.files.get(COMPANIONS_FILE);
  if (!file) return null;
  bundle.files.delete(COMPANIONS_FILE);
  const c = file.content as Partial<CompanionsBackup>;
  if (c.version !== 1 || typeof c.dashboard_id !== 'number' || !c.recording || typeof c.recording !== 'object') return null;
  return { version: 1, dashboard_id: c.dashboard_id, recording: c.recording };
}

const ALL_COPY = Object.fromEntries(COMPANION_KINDS.map((k) => [k, 'copy'])) as CompanionModes;

function scopeOf(client: SupersetClient, envId: string, kept: CompanionsBackup, log: Context['log']): CompanionScope {
  // Reports are put back as they were (active included, pause_reports false): the recording is this environment's own earlier
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
    mappings: new SameIds(),
    log,
    clients: { source: replayClient(kept.recording), target: client },
  };
}

/** Before the import: the kept companions compared with the environment; a role it no longer has stops the restore. */
export async function checkKeptCompanions(
  client: SupersetClient,
  envId: string,
  kept: CompanionsBackup,
  bundle: Bundle,
  title: string,
  log: Context['log'],
): Promise<{ reports: CompanionKindReport[]; missingRoles: string[]; next_actions: NextAction[] }> {
  const check = await checkCompanions(scopeOf(client, envId, kept, log), kept.dashboard_id, subjectOf(bundle, title));
  const missingRoles = check.reports
    .filter((r) => r.kind === 'roles')
    .flatMap((r) => r.items.filter((i) => i.action === 'missing').map((i) => i.name));
  return { reports: check.reports, missingRoles, next_actions: check.next_actions };
}

/** After the import: the kept companions put back; the writes Superset refused. */
export async function putBackCompanions(
  client: SupersetClient,
  envId: string,
  kept: CompanionsBackup,
  bundle: Bundle,
  title: string,
  log: Context['log'],
): Promise<{ reports: CompanionKindReport[]; refused: string[]; next_actions: NextAction[] }> {
  const scope = scopeOf(client, envId, kept, log);
  const subject = subjectOf(bundle, title);
  const check = await checkCompanions(scope, kept.dashboard_id, subject);
  // A restore always imports first: what the import undoes (a chart's annotation layer entries) is put back too.
  const refused = await applyCompanions(scope, kept.dashboard_id, subject, check, true);
  return { reports: check.reports, refused, next_actions: check.next_actions };
}
