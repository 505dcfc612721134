import type { RestoreInput } from '../../contracts/backup.ts';
import type { ActivityDeps } from '../deps.ts';
import { TargetIndexCache } from '../../domain/migration/index.ts';
import { backupDashboard, backupDashboardOfTask, type BackupDeps } from './backup.ts';
import { restoreBackup } from './restore.ts';
import { applyBackupRetention } from './retention.ts';

export { backupDashboard, restoreBackup, type BackupDeps };

/** The worker's deps for backing up, with the cache of each backup task's environment index (one per factory). */
export function backupDeps(deps: ActivityDeps): BackupDeps {
  return { ...deps, indexes: new TargetIndexCache() };
}

/** Backup, retention and restore, into and from the worker's one backup store (ActivityDeps.backupStore). */
export function createBackupActivities(deps: ActivityDeps) {
  const backup = backupDeps(deps);
  return {
    backupDashboard: (input: { envId: string; dashboardId: number }) => backupDashboard(backup, input),
    backupDashboardOfTask: (input: { envId: string; dashboardId: number; position: number; total: number }) =>
      backupDashboardOfTask(backup, input),
    applyBackupRetention: (input: { envId: string; dashboardIds: number[] }) => applyBackupRetention(deps, input),
    restoreBackup: (input: RestoreInput) => restoreBackup(deps, input),
  };
}
