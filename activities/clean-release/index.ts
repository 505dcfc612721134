import type { ReleaseCheckInput, ReleaseDecision } from '../../contracts/clean-release.ts';
import { backupDeps } from '../backups/index.ts';
import type { ActivityDeps } from '../deps.ts';
import { runReleaseChecks } from './checks.ts';
import { applyReleaseDecision } from './decision.ts';
import { publishReleaseArtifact } from './publish.ts';
import { revokeReleaseArtifact, settleRelease } from './revoke.ts';

/** A release candidate's checks, decisions, and the publish or revoke of its artifacts. */
export function createCleanReleaseActivities(deps: ActivityDeps) {
  // A publish backs up what it replaces, with the backup activities' own index cache.
  const backup = backupDeps(deps);
  return {
    runReleaseChecks: (input: ReleaseCheckInput) => runReleaseChecks(deps, input),
    applyReleaseDecision: (input: ReleaseDecision & { candidateId: string; decisionId: string }) => applyReleaseDecision(deps, input),
    publishReleaseArtifact: (input: { candidateId: string; dashboardUuid: string; position: number }) =>
      publishReleaseArtifact(backup, input),
    revokeReleaseArtifact: (input: { candidateId: string; dashboardUuid: string }) => revokeReleaseArtifact(deps, input),
    settleRelease: (input: { candidateId: string; mode: 'publish' | 'revoke'; failed: number }) => settleRelease(deps, input),
  };
}
