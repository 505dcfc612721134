/**
 * Dashboard roles (DASHBOARD_RBAC: a role on a dashboard lets its members see it, and only them),
 * matched by name. Copying adds the source's roles the target has to the target dashboard and
 * keeps the ones it has; a role the target lacks is reported with the next action, never created.
 * Under strict (the default) the source's roles are written too when strictRefuses lets them
 * through, so a dashboard restricted to a role the target has arrives restricted to it.
 */
import type { CompanionItem } from '../../../contracts/companions.ts';
import { attempt, item, type CompanionKind, type KindResult } from './kind.ts';
import { roleNamed } from './people.ts';
import type { CompanionDocuments } from './kind-documents.ts';

/** `companions/roles/<role>.yaml`: a dashboard role, by name. */
const rolesDocuments: CompanionDocuments<{ name: string }> = {
  write: ({ dashboard }) => dashboard.roles.map((r) => [r.name, { name: r.name }] as const),
  replay(docs, x) {
    x.dashboard.roles = docs.map((r, i) => ({ id: i + 1, name: r.name }));
  },
};

export const roles: CompanionKind<'roles'> = {
  kind: 'roles',
  documents: rolesDocuments,
  writesUnderStrict: true,
  async run(ctx, write): Promise<KindResult> {
    const [sourceRoles, tgt] = await Promise.all([ctx.sourceDashboardRoles(), ctx.targetView()]);
    const have = new Map((tgt?.dashboard.roles ?? []).map((r) => [r.name, r.id]));
    // The target's roles are read only when the source dashboard names one (most have none).
    const targetRoles = sourceRoles.length ? await ctx.targetRoles() : [];
    const items: CompanionItem[] = [];
    const add: number[] = [];
    const adding: CompanionItem[] = [];
    for (const r of sourceRoles) {
      const there = roleNamed({ roles: targetRoles }, r.name);
      if (!there) {
        items.push(
          item(r.name, 'missing', {
            note: 'the target has no role of this name',
            next_action: {
              action: 'create_role',
              description: `Create role '${r.name}' in the target Superset (Settings → List Roles), then migrate the dashboard again`,
            },
          }),
        );
        continue;
      }
      const i = item(r.name, have.has(r.name) ? 'unchanged' : 'create', { target_id: there.id });
      items.push(i);
      if (i.action === 'create') {
        add.push(there.id);
        adding.push(i);
      }
    }
    const named = new Set(sourceRoles.map((r) => r.name));
    for (const name of have.keys()) if (!named.has(name)) items.push(item(name, 'only_in_target'));
    if (write && tgt && add.length)
      await attempt(adding, () => ctx.target.meta.set('dashboard', tgt.dashboard.id, { roles: [...have.values(), ...add] }));
    return { items };
  },
};
