import { Bundle } from '../../lib/bundles/bundle.ts';
import type { MigrationUpstream, UpstreamDatabase } from './upstream.ts';

/**
 * A stored bundle (a repository at a commit, a release artifact), seen by the migration path as
 * its source environment: its export is the bundle, its databases are the ones the files reference (numbered in file
 * order, so mappings can name them).
 */
export function bundleSource(zip: Uint8Array, maxBytes: number): MigrationUpstream & { databases: UpstreamDatabase[] } {
  const bundle = Bundle.fromZip(zip, maxBytes);
  const databases = bundle.of('databases').map((f, i) => ({
    id: i + 1,
    uuid: String(f.content.uuid ?? ''),
    database_name: String(f.content.database_name ?? ''),
    backend: null,
  }));
  const unused = () => {
    throw new Error('a stored bundle is read only as an export');
  };
  return {
    databases,
    version: async () => null,
    exportDashboards: async () => zip,
    listDatabases: async () => databases,
    exportObjects: unused,
    importBundle: unused,
    listRows: unused,
    findDashboard: unused,
    recentDashboards: unused,
    dashboardCharts: unused,
    chartsForCheck: unused,
    runQueryContext: unused,
    chartUuids: unused,
    runLegacyChart: unused,
    rlsRules: unused,
    rlsRule: unused,
    rlsRoles: unused,
    createRlsRule: unused,
    updateRlsRule: unused,
  };
}
