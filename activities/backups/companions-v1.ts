/**
 * The reader of a backup's companions in format 1, the old format: `companions.yaml` at the
 * bundle's root, `{ version: 1, dashboard_id, recording }`, where the recording holds what the
 * companion kinds read of the environment keyed by the Superset client's method names
 * (`reports.list([])`, ../../domain/migration/companions/recording.ts). A key names a method, so a
 * client method renamed breaks it: backups are made in format 2 since (documents,
 * ./companions.ts), and this reader is kept only so the backups made before still restore. It
 * writes nothing; nothing makes format 1 any more.
 *
 * When it can go: once no stored backup holds a `companions.yaml`. Retention prunes a dashboard's
 * older backups (BACKUP_RETENTION_COUNT newest kept, BACKUP_RETENTION_DAYS), so that is once every
 * dashboard has been backed up that many times in format 2, or the oldest backup kept is younger
 * than format 2; a backup kept for longer on purpose keeps it here. Until then, a rename of a client
 * method the kinds read through must answer the old key here too, or that kind of a format-1
 * backup is reported unavailable ("not in the backup").
 */
import type { Bundle } from '../../lib/bundles/bundle.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';
import { type Recording, replayClient, SameIds } from '../../domain/migration/index.ts';

export const COMPANIONS_V1_FILE = 'companions.yaml';

export interface CompanionsV1 {
  version: 1;
  /** The dashboard's id when it was backed up: the recording's reads name it. */
  dashboard_id: number;
  recording: Recording;
}

/** The format-1 companions, taken out of the bundle; null when it holds none, or none readable as format 1 (as before format 2). */
export function takeCompanionsV1(bundle: Bundle): CompanionsV1 | null {
  const file = bundle.files.get(COMPANIONS_V1_FILE);
  if (!file) return null;
  bundle.files.delete(COMPANIONS_V1_FILE);
  const c = file.content as Partial<CompanionsV1>;
  if (c.version !== 1 || typeof c.dashboard_id !== 'number' || !c.recording || typeof c.recording !== 'object') return null;
  return { version: 1, dashboard_id: c.dashboard_id, recording: c.recording };
}

/**
 * The recording as the kinds' source: the dashboard under its id when it was backed up, every
 * database id as it was then (the recording is this environment's own earlier state).
 */
export function replayV1(kept: CompanionsV1): { source: SupersetClient; dashboardId: number; mappings: Map<number, number> } {
  return { source: replayClient(kept.recording), dashboardId: kept.dashboard_id, mappings: new SameIds() };
}
