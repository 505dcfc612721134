/**
 * The one decider of how a chart is checked in an environment, the way that release's frontend
 * renders it: a legacy-API type through the explore endpoint with its saved form_data; else its
 * saved query context (pointed at the chart's own dataset there); else a query built from its
 * form_data for the types whose build is known to match the plugin's; else not verifiable.
 */
import type { CheckPlan, ChartForCheck } from './types.ts';
import { FORM_DATA_BUILDS, usesLegacyApi } from './visualisations.ts';

export function planCheck(chart: ChartForCheck, release: string | null): CheckPlan {
  if (!chart.datasource) return { method: null, reason: 'the chart has no dataset' };
  // The frontend of a legacy-API type never reads a saved query context: it posts the form_data.
  if (usesLegacyApi(chart.viz_type, release)) return { method: 'legacy_api', chartId: chart.id };
  const datasource = chart.datasource;
  const saved = chart.query_context;
  if (saved && Array.isArray(saved.queries) && saved.queries.length) {
    // Superset's import keeps the source's dataset id in a saved query context: the chart's own is used.
    const formData = {
      ...(saved.form_data as Record<string, unknown> | undefined),
      datasource: `${datasource.id}__${datasource.type}`,
      slice_id: chart.id,
    };
    return { method: 'saved_query_context', queryContext: { ...saved, datasource, form_data: formData, force: false } };
  }
  const build = FORM_DATA_BUILDS[chart.viz_type];
  if (!build)
    return {
      method: null,
      reason: `no saved query context, and Switchyard does not build a '${chart.viz_type}' chart's query the way its plugin does (the browser check renders it)`,
    };
  const built = build(chart.form_data, release);
  if ('reason' in built) return { method: null, reason: built.reason };
  const form_data = { ...chart.form_data, slice_id: chart.id };
  return {
    method: 'form_data',
    queryContext: { datasource, force: false, queries: built.queries, form_data, result_format: 'json', result_type: 'full' },
  };
}
