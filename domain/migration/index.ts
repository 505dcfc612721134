/**
 * The migration engine's front door: what activities/ (the migration's own activity factory and
 * the backups, git deploys, clean releases, schedules and validation that reuse its parts) may
 * import of domain/migration/. Anything else under this folder is the engine's own; a deep import
 * from outside is refused by dependency-cruiser's `domain-front-door` rule (docs/layout.md).
 */

// The engine as the migration activities run it: services once per worker, then a batch, a single
// dashboard, a verification, the task's end. The activity supplies its log and heartbeat (./port.ts).
export type { ActivityPort, Log } from './port.ts';
export type { MigrationDeps } from './deps.ts';
export { createMigrationCaches, forgetTask, type MigrationCaches } from './caches.ts';
export { createMigrationServices, type MigrationServices, type Request } from './context.ts';
export { runBatch } from './batch.ts';
export { migrateDashboard } from './dashboard.ts';
export { chartQueryVerifier, type Verifier } from './verifier.ts';
export { verifyDeployed, verifyImported } from './verify.ts';
export { finishTask, recordFailures } from './record.ts';
export { unwrapStep } from './step.ts';

// Reading and writing Superset: the engine's port over the client, and the target's index.
export { upstreamFor } from './superset-upstream.ts';
export type { MigrationUpstream, UpstreamDatabase } from './upstream.ts';
export { TargetIndex } from './target-index.ts';
export { TargetIndexCache } from './target-index-cache.ts';

// One dashboard planned and imported outside a migration task (a git deploy, a clean release).
export { bundleSource } from './bundle-source.ts';
export { prepareDashboard } from './plan.ts';
export { importPrepared } from './apply.ts';

// Row-level security (backups and restores).
export { datasetsOf, missingRoles, rulesOnDatasets, withDescriptions, writeRules } from './rls.ts';

// Companion assets: their kinds, recording and replay (backups, git captures and deploys).
export { companionContext } from './companions/context.ts';
export { captureCompanions, type CaptureSubject, type CapturedCompanions, SameIds } from './companions/capture.ts';
export { type CapturedKinds, KINDS_FILE } from './companions/documents.ts';
export { markNotCaptured, REPLAYED_DASHBOARD_ID, type Replay, replayOf } from './companions/documents-replay.ts';
export { type Directory, labelOf, sourceAccount } from './companions/people.ts';
export { type Recording, recordingClient, recordingKey, replayClient } from './companions/recording.ts';
export type { CompanionScope } from './companions/scope.ts';
export { COMPANION_KIND_MODULES } from './companions/kinds.ts';
export { applyCompanions, checkCompanions, type CompanionSubject } from './companions/step.ts';

// Chart checks (the content validator runs them on their own).
export { type ChartQueryGates, sharedChartQueryGates } from './chart-check/limit.ts';
export { runChecks } from './chart-check/run.ts';
export type { ChartCheck, ChartForCheck } from './chart-check/types.ts';
export { exportedCharts, type ExportedChart } from './chart-check/exported.ts';
