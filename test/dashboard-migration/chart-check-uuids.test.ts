import { describe, expect, it } from 'vitest';
import { chartsForCheck } from '../../domain/migration/chart-check/superset.ts';
import type { SupersetClient } from '../../lib/superset/client.ts';

/** A client over two charts whose details carry a uuid (6.0 and later) or not (4.1, 5.0); it counts the uuid lists asked. */
function client(detailsCarryUuid: boolean) {
  const asked = { lists: 0 };
  const c = {
    dashboards: {
      charts: async () => [
        { id: 1, slice_name: 'one', form_data: {} },
        { id: 2, slice_name: 'two', form_data: {} },
      ],
    },
    charts: {
      get: async (id: number) => ({
        id,
        viz_type: 'table',
        datasource_id: 5,
        datasource_type: 'table',
        ...(detailsCarryUuid ? { uuid: `detail-${id}` } : {}),
      }),
    },
    lists: {
      all: async () => {
        asked.lists++;
        return [
          { id: 1, uuid: 'listed-1' },
          { id: 2, uuid: 'listed-2' },
        ];
      },
    },
  } as unknown as SupersetClient;
  return { c, asked };
}

describe("chart check: a dashboard's charts with their uuids", () => {
  it("takes each uuid from the chart's detail where the release gives it, without the list", async () => {
    const { c, asked } = client(true);
    expect((await chartsForCheck(c, 9)).map((x) => x.uuid)).toEqual(['detail-1', 'detail-2']);
    expect(asked.lists).toBe(0);
  });

  it('lists them where the details carry none (4.1, 5.0)', async () => {
    const { c, asked } = client(false);
    expect((await chartsForCheck(c, 9)).map((x) => x.uuid)).toEqual(['listed-1', 'listed-2']);
    expect(asked.lists).toBe(1);
  });
});
