/**
 * What one migration activity resolves once: each environment's Superset client.
 */
import type { ActivityDeps } from '../deps.ts';
import type { MigrationServices } from '../../domain/migration/index.ts';

/**
 * The services one activity runs with: each environment's client resolved once for the whole
 * activity (and what it began that outlives it), instead of once per read. Resolving reads the
 * environment's row; a batch asked for its clients some sixty times, and an environment edited
 * meanwhile could have switched a batch to another host half-way. The next activity resolves
 * again. A failed resolution is not kept.
 */
export function clientsOnce(svc: MigrationServices): MigrationServices {
  const resolved = new Map<string, ReturnType<ActivityDeps['superset']>>();
  const superset: ActivityDeps['superset'] = (envId) => {
    let client = resolved.get(envId);
    if (!client) {
      client = svc.deps.superset(envId);
      // expected: a client that failed to open is forgotten here; its caller awaits it and meets the error.
      client.catch(() => resolved.delete(envId));
      resolved.set(envId, client);
    }
    return client;
  };
  return { ...svc, deps: { ...svc.deps, superset } };
}
