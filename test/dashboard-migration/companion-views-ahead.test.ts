import { describe, expect, it } from 'vitest';
import type { CompanionKindReport } from '../../contracts/companions.ts';
import { applyCompanions, readImportedViewsAhead, type CompanionCheck } from '../../domain/migration/companions/step.ts';
import type { CompanionScope } from '../../domain/migration/companions/scope.ts';
import { takeTargetChartList } from '../../domain/migration/companions/views-ahead.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';

/**
 * After a joint import the companions are written one dashboard after another; their target
 * views are read ahead together (their charts in one list read), and one read before another
 * dashboard's write is read again.
 * Observed through stub clients: dashboard d's chart is `100 + d`, owned in the source by account 1.
 */
function env(targetOwners: (id: number) => number[]) {
  const reads: number[] = [];
  const writes: Array<[string, number]> = [];
  let open = 0;
  let mostOpen = 0;
  const meta = (owners: number[]) => ({
    uuid: null,
    roles: [],
    tags: [],
    theme_id: null,
    certified_by: null,
    owners: owners.map((id) => ({ id })),
  });
  const people = {
    users: { all: async () => ({ accounts: [{ id: 1, username: 'ann', email: null, display_name: 'Ann' }], usernames: true }) },
    roles: { all: async () => [] },
  };
  const source = {
    ...people,
    meta: {
      get: async (kind: string, id: number) => ({ ...meta([1]), id, uuid: `${kind}-${id % 100}`, name: `${kind} ${id}` }),
      listed: async (kind: string, ids: number[]) =>
        ids.map((id) => ({ ...meta([1]), id, uuid: `${kind}-${id % 100}`, name: `${kind} ${id}` })),
    },
    dashboards: { charts: async (id: number) => [{ id: 100 + id }], datasets: async () => [] },
  } as unknown as SupersetClient;
  const target = {
    ...people,
    meta: {
      get: async (kind: string, id: number) => {
        if (kind === 'dashboard') {
          reads.push(id);
          mostOpen = Math.max(mostOpen, ++open);
          await new Promise((r) => setImmediate(r));
          open--;
        }
        return { ...meta(targetOwners(id)), id, uuid: `${kind}-${id % 100}`, name: `${kind} ${id}` };
      },
      listed: async (kind: string, ids: number[]) =>
        ids.map((id) => ({ ...meta(targetOwners(id)), id, uuid: `${kind}-${id % 100}`, name: `${kind} ${id}` })),
      set: async (kind: string, id: number) => void writes.push([kind, id]),
    },
    dashboards: { charts: async (id: number) => [{ id: 100 + id }], datasets: async () => [] },
  } as unknown as SupersetClient;
  const scope: CompanionScope = {
    svc: { deps: { superset: async () => source } },
    input: { sourceEnvId: 's', targetEnvId: 't', companions: {} } as unknown as CompanionScope['input'],
    mappings: new Map(),
    log: { info() {}, warn() {}, error() {} } as unknown as CompanionScope['log'],
    clients: { source, target },
  };
  return { scope, reads, writes, mostOpen: () => mostOpen };
}

/** What the comparison before the import said: the owner is to be added (the dashboard was not in the target). */
const checkOf = (): CompanionCheck => ({
  reports: [
    { kind: 'owners', mode: 'copy', available: true, items: [{ name: 'ann', action: 'create', done: false }] } as CompanionKindReport,
  ],
  next_actions: [],
});
const subject = (d: number) => ({ dashboardUuid: `dashboard-${d}`, title: `d${d}`, datasets: [], targetDashboardId: d });

describe('companions after a joint import: target views read ahead', () => {
  it('reads each dashboard once, together, when the writes find nothing to do', async () => {
    const { scope, reads, writes, mostOpen } = env(() => [1]); // the import made account 1 the owner everywhere
    const ids = [1, 2, 3];
    const checks = ids.map(checkOf);
    readImportedViewsAhead(
      scope,
      ids.map((d, at) => ({ targetDashboardId: d, check: checks[at] })),
      1 << 20,
    );
    for (const [at, d] of ids.entries()) expect(await applyCompanions(scope, d, subject(d), checks[at]!, true)).toEqual([]);
    expect(reads.sort()).toEqual([1, 2, 3]);
    expect(mostOpen()).toBeGreaterThan(1);
    expect(writes).toEqual([]);
    // Nothing written: each dashboard's chart list, read with its view, is handed to the target's chart checks, once.
    expect(await takeTargetChartList(scope.input, 2)).toEqual([{ id: 102 }]);
    expect(takeTargetChartList(scope.input, 2)).toBeUndefined();
  });

  it('reads a view again when a write came after its read', async () => {
    const { scope, reads, writes } = env((id) => (id === 1 ? [] : [1])); // dashboard 1 lacks its owner: written
    const ids = [1, 2];
    const checks = ids.map(checkOf);
    readImportedViewsAhead(
      scope,
      ids.map((d, at) => ({ targetDashboardId: d, check: checks[at] })),
      1 << 20,
    );
    for (const [at, d] of ids.entries()) await applyCompanions(scope, d, subject(d), checks[at]!, true);
    expect(writes).toContainEqual(['dashboard', 1]);
    // Dashboard 2's view, read ahead before dashboard 1's write, is read again after it.
    expect(reads.filter((id) => id === 2)).toHaveLength(2);
    // Its chart list too: read before a write, it is not handed to the chart checks (a write may have changed a chart's params).
    expect(takeTargetChartList(scope.input, 2)).toBeUndefined();
  });
});
