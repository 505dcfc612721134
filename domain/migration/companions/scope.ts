/**
 * What the companion step runs in (its scope), and the two things every part of it derives from
 * that scope: the key its reads are kept under, and both environments' clients.
 */
import type { EnvRule } from '../../../contracts/env-rules.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { MigrationDeps } from '../deps.ts';
import type { Log, Request } from '../context.ts';

/** What the step needs of a migration: its services' deps, the request, the database mappings, the log. */
export interface CompanionScope {
  svc: { deps: Pick<MigrationDeps, 'superset'> };
  input: Request;
  mappings: Map<number, number>;
  log: Log;
  /** Instead of the environments' clients: a backup's recorded source (./recording.ts), or the environment itself. */
  clients?: { source: SupersetClient; target: SupersetClient };
  /** The pair's per-environment rules, when the caller has read them (none: allowed domains as they are). */
  envRules?: readonly EnvRule[];
  /** What the source's reads and both sides' people are kept under (a migration's task snapshot, shared by its batches); without it, the activity's input. */
  taskSnapshot?: object;
}

/** The key the source's reads and both sides' people are kept under: the caller's snapshot, else the activity (its input object). */
export function snapshotOf(scope: Pick<CompanionScope, 'input' | 'taskSnapshot'>): object {
  return scope.taskSnapshot ?? scope.input;
}

/** Both environments' clients: the scope's own (a backup's recording), else the environments'. */
export async function clientsOf(scope: Pick<CompanionScope, 'svc' | 'input' | 'clients'>): Promise<[SupersetClient, SupersetClient]> {
  return scope.clients
    ? [scope.clients.source, scope.clients.target]
    : await Promise.all([scope.svc.deps.superset(scope.input.sourceEnvId), scope.svc.deps.superset(scope.input.targetEnvId)]);
}
