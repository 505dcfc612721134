import type { Context } from '@temporalio/activity';
import { sampleValues, type DatasetContext } from '../../../lib/llm/dataset-docs.ts';
import type { SupersetClient } from '../../../lib/superset/client.ts';
import type { DatasetDetail } from '../../../lib/superset/types.ts';

const SAMPLE_ROWS = 20;

/** What the model sees: names, types, SQL, metrics, existing texts, and sample values only where allowed. */
export async function contextOf(
  client: SupersetClient,
  d: DatasetDetail,
  samplesAllowed: boolean,
  log: Context['log'],
): Promise<DatasetContext> {
  let rows: Array<Record<string, unknown>> = [];
  if (samplesAllowed) {
    const physical = d.columns.filter((c) => !c.expression).map((c) => c.column_name);
    try {
      const data = await client.charts.data({
        datasource: { id: d.id, type: 'table' },
        queries: [{ columns: physical, row_limit: SAMPLE_ROWS }],
      });
      rows = data.result[0]?.data ?? [];
    } catch (err) {
      log.warn(
        `dataset ${d.id}: sample values could not be read (${err instanceof Error ? err.message : String(err)}); documenting without them`,
      );
    }
  }
  return {
    name: d.table_name,
    kind: d.sql ? 'virtual' : 'physical',
    database_backend: d.database.backend ?? null,
    schema: d.schema ?? null,
    sql: d.sql ?? null,
    description: d.description ?? null,
    columns: d.columns.map((c) => ({
      name: c.column_name,
      type: c.type ?? null,
      is_temporal: !!c.is_dttm,
      expression: c.expression ?? null,
      label: c.verbose_name ?? null,
      description: c.description ?? null,
      ...(samplesAllowed && rows.length ? { sample_values: sampleValues(rows, c.column_name) } : {}),
    })),
    metrics: d.metrics.map((m) => ({
      name: m.metric_name,
      expression: m.expression,
      label: m.verbose_name ?? null,
      description: m.description ?? null,
    })),
  };
}
