/**
 * The companions of a commit's files (../../domain/migration/companions/documents.ts) applied into
 * an environment, for a git deploy and a clean release's publish: the migration's own companion
 * step (../../domain/migration/companions/step.ts) with the files replayed as its source
 * (../../domain/migration/companions/documents-replay.ts) and the environment as its target.
 * Checked before the import (a `strict` kind that differs stops it, as in a migration), written
 * after it. A backup's restore replays the same documents (../backups/companions.ts).
 */
import type { Context } from '@temporalio/activity';
import { companionModes, strictRefuses, type CompanionKindReport, type CompanionRequest } from '../../contracts/companions.ts';
import type { EnvRule } from '../../contracts/env-rules.ts';
import type { NextAction } from '../../contracts/outcomes.ts';
import type { ActivityDeps } from '../deps.ts';
import {
  applyCompanions,
  checkCompanions,
  type CompanionScope,
  type CompanionSubject,
  markNotCaptured,
  REPLAYED_DASHBOARD_ID,
  replayClient,
  replayOf,
  type Request,
} from '../../domain/migration/index.ts';

export const NO_COMPANION_FILES =
  'no companion files (companions/) are among these files (committed before they were kept, or taken from an export): nothing to apply';

export interface DeployCompanions {
  /** Per kind, what was compared (and, after apply, written); empty when the files hold none. */
  reports: CompanionKindReport[];
  /** Why nothing was compared, when the files hold no companions. */
  note?: string;
  next_actions: NextAction[];
  /** A strict kind differs: nothing may be imported. */
  blocked?: { code: 'companions_mismatch'; error: string; kinds: string[] };
  /** After the import, given the dashboard's id in the target it answered: the copy kinds written; the writes Superset refused. */
  apply(targetDashboardId: number): Promise<string[]>;
}

export interface DeployCompanionsOptions {
  deps: Pick<ActivityDeps, 'superset'>;
  files: Map<string, string>;
  /** The bundle source's databases (their ids are what `mappings` names). */
  databases: Array<{ id: number; uuid: string }>;
  /** Where the files came from (a log's words) and where they go. */
  sourceLabel: string;
  targetEnvId: string;
  companions: CompanionRequest | undefined;
  mappings: Map<number, number>;
  envRules: readonly EnvRule[];
  subject: CompanionSubject;
  log: Context['log'];
}

/** Before the import: the files' companions compared with the target by the request's modes. */
export async function checkDeployCompanions(o: DeployCompanionsOptions): Promise<DeployCompanions> {
  const replay = replayOf(o.files, o.databases);
  if (!replay) return { reports: [], note: NO_COMPANION_FILES, next_actions: [], apply: async () => [] };
  const input: Request = {
    sourceEnvId: o.sourceLabel,
    targetEnvId: o.targetEnvId,
    dbMappings: [],
    overwrite: true,
    dryRun: false,
    companions: o.companions,
  };
  const scope: CompanionScope = {
    svc: { deps: o.deps },
    input,
    mappings: o.mappings,
    log: o.log,
    clients: { source: replayClient(replay.recording), target: await o.deps.superset(o.targetEnvId) },
    envRules: o.envRules,
  };
  const check = await checkCompanions(scope, REPLAYED_DASHBOARD_ID, o.subject);
  markNotCaptured(check.reports, replay.kinds, 'the repository');
  const strict = check.reports.filter((r) => r.mode === 'strict' && r.available && strictRefuses(r));
  return {
    reports: check.reports,
    next_actions: check.next_actions,
    ...(check.blocked ? { blocked: { code: 'companions_mismatch', error: check.blocked.error, kinds: strict.map((r) => r.kind) } } : {}),
    // Called after the import, which always runs for a deploy: what an import undoes (a chart's annotation layer entries) is put back.
    // The subject's target id is the plan's (null when the target had no such dashboard): the import's answer replaces it, or a
    // first deploy would find no dashboard to write owners, roles, tags, reports, the theme and the charts' layer entries on.
    apply: (targetDashboardId) => applyCompanions(scope, REPLAYED_DASHBOARD_ID, { ...o.subject, targetDashboardId }, check, true),
  };
}

/** A blocked deploy's next actions: the same deploy with the strict kinds copied, or ignored. */
export function redeployActions(
  kinds: string[],
  request: CompanionRequest | undefined,
  again: (companions: CompanionRequest) => NextAction['request'],
): NextAction[] {
  const modes = companionModes(request);
  const withMode = (mode: 'copy' | 'ignore'): CompanionRequest => ({
    ...request,
    pause_reports: modes.pause_reports,
    ...Object.fromEntries(kinds.map((k) => [k, mode])),
  });
  return [
    {
      action: 'retry_with_companions_copy',
      description: `Deploy again copying the repository's ${kinds.join(', ')} into the target (never deleting what only the target has)`,
      request: again(withMode('copy')),
    },
    {
      action: 'retry_with_companions_ignore',
      description: `Deploy anyway, recording that the ${kinds.join(', ')} differences were ignored on request`,
      request: again(withMode('ignore')),
    },
  ];
}
