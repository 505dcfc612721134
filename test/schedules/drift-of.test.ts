import { describe, expect, it } from 'vitest';
import type { CompanionKindReport } from '../../contracts/companions.ts';
import type { DashboardOutcome } from '../../contracts/migration.ts';
import { driftOf } from '../../workflows/drift.ts';

/**
 * How a drift report reads a dashboard's dry run (workflows/drift.ts), for the cases the real
 * Superset pair of drift-companions.test.ts does not produce: a kind the target release lacks
 * (themes into 5.0, as the theme kind reports it there), a companion only the target has, an
 * owner the target has no account for.
 */
const input = { sourceEnvId: 'src', targetEnvId: 'tgt' };

function planned(companions: CompanionKindReport[]): DashboardOutcome {
  return {
    kind: 'dashboard',
    id: 7,
    title: 'Sales',
    status: 'planned',
    outcome: 'planned',
    target_dashboard_id: 70,
    dashboard_uuid: 'u-7',
    objects: [{ kind: 'dashboard', file: 'dashboards/Sales_7.yaml', name: 'Sales', uuid: 'u-7', action: 'unchanged', target_id: 70 }],
    database_mappings: [],
    collisions: [],
    dropped_fields: [],
    defaulted_fields: [],
    learned_rejections: [],
    chart_uuids: [],
    import_attempts: 0,
    next_actions: [],
    companions,
  };
}

const UPGRADE = { action: 'upgrade_target_superset', description: "The target's Superset release has no themes" };

describe('a drift item from a dry run', () => {
  it("a kind the target release lacks is named as not compared, with what is left behind: neither drift nor in sync's proof", () => {
    const item = driftOf(
      planned([
        { kind: 'tags', mode: 'ignore', available: true, items: [{ name: 'finance', action: 'unchanged', done: false }] },
        {
          kind: 'themes',
          mode: 'ignore',
          available: false,
          unavailable: "the target's Superset release has no themes",
          items: [{ name: 'Brand', action: 'missing', done: false, note: 'dropped: the target has no theme API', next_action: UPGRADE }],
        },
      ]),
      input,
    );
    expect(item.status).toBe('in_sync');
    expect(item.companions).toEqual([]);
    expect(item.companions_not_compared).toEqual([
      {
        kind: 'themes',
        reason: "the target's Superset release has no themes",
        dropped: [{ name: 'Brand', note: 'dropped: the target has no theme API', next_action: UPGRADE }],
      },
    ]);
  });

  it('what only the target has is not drift (copying never deletes it); an owner without an account is, with its own next action', () => {
    const createUser = { action: 'create_user', description: "Create the account 'ann' in the target Superset" };
    const item = driftOf(
      planned([
        {
          kind: 'owners',
          mode: 'ignore',
          available: true,
          ignored_by_request: true,
          items: [
            { name: 'svc', action: 'only_in_target', done: false },
            { name: 'ann', action: 'missing', done: false, note: 'no account in the target', next_action: createUser },
          ],
        },
        {
          kind: 'themes',
          mode: 'ignore',
          available: true,
          items: [{ name: 'Brand', action: 'update', done: false, fields: ['json_data'] }],
        },
      ]),
      input,
    );
    expect(item.status).toBe('drifted');
    expect(item.companions).toEqual([
      {
        kind: 'owners',
        name: 'ann',
        action: 'missing',
        difference: 'cannot be carried: no account in the target',
        next_action: createUser,
      },
      {
        kind: 'themes',
        name: 'Brand',
        action: 'update',
        fields: ['json_data'],
        difference: 'differs in the target: json_data',
        next_action: expect.objectContaining({ action: 'migrate_again' }),
      },
    ]);
    // Only the kind a migration writes is asked to be copied; the owner's account comes first.
    expect(item.companions![1]!.next_action.request!.body).toMatchObject({ dashboard_ids: [7], companions: { themes: 'copy' } });
    expect(item.next_actions.map((a) => a.action)).toEqual(['create_user', 'migrate_again']);
  });

  it('a dry run that ended otherwise is failed with its cause', () => {
    const item = driftOf({ ...planned([]), status: 'failed', error: 'no mapping', step: 'plan' }, input);
    expect(item).toMatchObject({ status: 'failed', outcome: 'failed', error: 'no mapping', step: 'plan' });
  });
});
