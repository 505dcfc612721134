import { describe, expect, it } from 'vitest';
import { clientsOnce } from '../../activities/dashboard-migration/activity-clients.ts';
import type { MigrationServices } from '../../domain/migration/context.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';

/**
 * A migration activity resolves each environment's client once (resolving reads the environment's
 * row): every read of the activity gets that client, the next activity resolves again, and a
 * failed resolution is asked again.
 */
function services() {
  const asked: string[] = [];
  let failNext = false;
  const svc = {
    deps: {
      superset: async (envId: string) => {
        asked.push(envId);
        if (failNext) {
          failNext = false;
          throw new Error(`environment ${envId} could not be read`);
        }
        return { envId, resolution: asked.length } as unknown as SupersetClient;
      },
    },
  } as unknown as MigrationServices;
  return { svc, asked, failOnce: () => (failNext = true) };
}

describe("a migration activity's environments", () => {
  it('are resolved once an activity, and again by the next one', async () => {
    const { svc, asked } = services();
    const activity = clientsOnce(svc);
    const [a, b, c] = await Promise.all([activity.deps.superset('src'), activity.deps.superset('src'), activity.deps.superset('dst')]);
    expect(a).toBe(b);
    expect(await activity.deps.superset('src')).toBe(a);
    expect(c).not.toBe(a);
    expect(asked).toEqual(['src', 'dst']);

    const next = clientsOnce(svc);
    expect(await next.deps.superset('src')).not.toBe(a);
    expect(asked).toEqual(['src', 'dst', 'src']);
  });

  it('asks again after a failed resolution', async () => {
    const { svc, asked, failOnce } = services();
    const activity = clientsOnce(svc);
    failOnce();
    await expect(activity.deps.superset('src')).rejects.toThrow('could not be read');
    await expect(activity.deps.superset('src')).resolves.toMatchObject({ envId: 'src' });
    expect(asked).toEqual(['src', 'src']);
  });
});
