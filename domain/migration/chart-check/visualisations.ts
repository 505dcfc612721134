/**
 * The one table of how each visualisation type is checked, per Superset release (4.1 to 6.1),
 * settled from Superset's own code: the frontend plugins that declare `useLegacyApi: true` in each
 * release's built assets (superset/static/assets of the 4.1.4, 5.0.0, 6.0.0 and 6.1.0 wheels) are
 * rendered through the legacy `/superset/explore_json/` endpoint, whose backend (superset/viz.py)
 * holds every one of them in those releases. Every other plugin renders through the chart-data API
 * with a query its own `buildQuery` writes in the browser; Switchyard builds that query itself only
 * for the types in FORM_DATA_BUILDS, whose build is tested against Superset's answer for the same
 * chart saved with a query context (test/dashboard-migration/examples-verification.test.ts).
 */
import { buildBigNumberTrendline } from './build-trendline.ts';
import { buildHeatmap } from './build-heatmap.ts';
import { buildHistogram } from './build-histogram.ts';
import { buildTimeseries } from './build-timeseries.ts';
import { compareRelease } from './release.ts';
import { buildBigNumberTotal, buildPie, buildTable, buildTreemap, buildWordCloud, type FormDataBuild } from './build.ts';

export { compareRelease };

/**
 * Legacy-API types and the last release whose frontend renders them that way (`null`: every
 * release up to 6.1). In 6.1 the deck.gl layers but GeoJSON and Multiple Layers, and Bullet, moved
 * to the chart-data API; in 5.0 the NVD3 time series, bar, histogram, heatmap, sankey and event
 * flow plugins went (their charts are migrated to ECharts types on upgrade).
 */
export const LEGACY_API: Readonly<Record<string, string | null>> = {
  bubble: null,
  cal_heatmap: null,
  chord: null,
  compare: null,
  country_map: null,
  deck_geojson: null,
  deck_multi: null,
  horizon: null,
  mapbox: null,
  paired_ttest: null,
  para: null,
  partition: null,
  rose: null,
  time_pivot: null,
  time_table: null,
  world_map: null,
  bullet: '6.0',
  deck_arc: '6.0',
  deck_contour: '6.0',
  deck_grid: '6.0',
  deck_heatmap: '6.0',
  deck_hex: '6.0',
  deck_path: '6.0',
  deck_polygon: '6.0',
  deck_scatter: '6.0',
  deck_screengrid: '6.0',
  area: '4.1',
  bar: '4.1',
  dist_bar: '4.1',
  event_flow: '4.1',
  heatmap: '4.1',
  histogram: '4.1',
  line: '4.1',
  sankey: '4.1',
};

/**
 * Chart-data types whose query Switchyard builds from `form_data` the way the plugin's
 * `buildQuery` does in the chart's release (4.1 to 6.1; a build is given the release where the
 * plugins differ): only what is tested against Superset's own answer. Any other type without a saved query context is `not_verifiable`.
 */
export const FORM_DATA_BUILDS: Readonly<Record<string, FormDataBuild>> = {
  table: buildTable,
  big_number_total: buildBigNumberTotal,
  big_number: buildBigNumberTrendline,
  // The ECharts time series plugins share one buildQuery.
  echarts_timeseries: buildTimeseries,
  echarts_timeseries_line: buildTimeseries,
  echarts_timeseries_bar: buildTimeseries,
  echarts_area: buildTimeseries,
  echarts_timeseries_scatter: buildTimeseries,
  echarts_timeseries_smooth: buildTimeseries,
  echarts_timeseries_step: buildTimeseries,
  histogram_v2: buildHistogram,
  heatmap_v2: buildHeatmap,
  pie: buildPie,
  treemap_v2: buildTreemap,
  word_cloud: buildWordCloud,
};

/** Whether `vizType` renders through the legacy explore endpoint in `release` (major.minor; null: unknown, taken as the newest). */
export function usesLegacyApi(vizType: string, release: string | null): boolean {
  if (!(vizType in LEGACY_API)) return false;
  const until = LEGACY_API[vizType];
  return until === null || (release !== null && compareRelease(release, until) <= 0);
}
