/**
 * A dashboard's companions as documents, for its repository (docs/git.md, Companions) and its
 * backups (activities/backups/companions.ts): the companion kinds run over the environment with
 * their reads recorded (./recording.ts); what they read is then written one YAML per companion,
 * ids replaced by names and uuids (./documents.ts). The kinds decide what belongs to the
 * dashboard; nothing here decides it a second time.
 */
import { COMPANION_KINDS, type CompanionKindName } from '../../../contracts/companions.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { SupersetForbiddenError, SupersetNotFoundError } from '../../../lib/superset/errors.ts';
import { companionDocs, type CapturedKinds } from './documents.ts';
import { companionContext } from './context.ts';
import { type Recording, recordingClient } from './recording.ts';
import { COMPANION_KIND_MODULES } from './kinds.ts';

/** What the capture is told of the bundle: the dashboard's uuid and title, each dataset's database uuid. */
export interface CaptureSubject {
  dashboardUuid: string;
  title: string;
  /** dataset uuid → its database's uuid (the bundle's dataset files say it). */
  datasetDatabases: Record<string, string>;
}

/** The companion files (path → YAML) and, per kind, `captured` or why it could not be read. */
export interface CapturedCompanions {
  files: Record<string, string>;
  kinds: CapturedKinds;
  /** How many companions the kinds found (a backup's item counts them). */
  items: number;
}

/** A database id is itself in its own environment (a capture, and a restore of a format-1 backup, compare the environment with itself). */
export class SameIds extends Map<number, number> {
  override get(id: number): number {
    return id;
  }
}

/** Reads the dashboard's companions in its environment (nothing is written: the kinds compare the environment with itself). */
export async function captureCompanions(client: SupersetClient, dashboardId: number, subject: CaptureSubject): Promise<CapturedCompanions> {
  const recording: Recording = {};
  const ctx = companionContext({
    source: recordingClient(client, recording),
    target: client,
    sourceDashboardId: dashboardId,
    dashboardUuid: subject.dashboardUuid,
    title: subject.title,
    datasetUuids: new Map(),
    mappings: new SameIds(),
    pauseReports: false,
    activity: {},
  });
  const kinds = Object.fromEntries(COMPANION_KINDS.map((k) => [k, 'captured'])) as CapturedKinds;
  const names = new Map<CompanionKindName, Set<string>>();
  let items = 0;
  for (const kind of COMPANION_KIND_MODULES) {
    try {
      const r = await kind.run(ctx, false);
      items += r.items.length;
      if (r.unavailable) kinds[kind.kind] = r.unavailable;
      names.set(kind.kind, new Set(r.items.filter((i) => i.action !== 'missing').map((i) => i.name)));
    } catch (err) {
      if (!(err instanceof SupersetNotFoundError || err instanceof SupersetForbiddenError)) throw err;
      kinds[kind.kind] = `Superset refused to show it: ${err.message.slice(0, 300)}`;
    }
  }
  const databases = await databaseUuids(client, recording, subject);
  return { files: companionDocs({ recording, dashboardId, kinds, names, databases }), kinds, items };
}

/** Source database id → uuid: the datasets' databases from the bundle, every other one (an alert's) from the database list. */
async function databaseUuids(client: SupersetClient, recording: Recording, subject: CaptureSubject): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const [key, hit] of Object.entries(recording)) {
    if (!key.startsWith('meta.get(["dataset",') || !('answer' in hit)) continue;
    const d = hit.answer as { uuid: string | null; database_id: number | null };
    const uuid = d.uuid ? subject.datasetDatabases[d.uuid] : undefined;
    if (d.database_id !== null && uuid) out.set(d.database_id, uuid);
  }
  const asked = Object.entries(recording).flatMap(([key, hit]) =>
    key.startsWith('reports.get(') && 'answer' in hit ? [(hit.answer as { database_id: number | null }).database_id] : [],
  );
  if (asked.some((id) => id !== null && !out.has(id))) {
    for (const d of await client.databases.list()) if (d.uuid && !out.has(d.id)) out.set(d.id, d.uuid);
  }
  return out;
}
