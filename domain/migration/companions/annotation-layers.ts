/**
 * Annotation layers the dashboard's charts draw (a chart's params name a native layer by its id,
 * `annotation_layers[].value` with `sourceType: "NATIVE"`), with their annotations. A layer is
 * matched by name, an annotation by its short description and start; copying creates or updates
 * them (annotations only the target has stay) and points each chart's entry at the target's layer
 * id: without that the chart would draw whatever layer has the source's id in the target, or none.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CompanionItem } from '../../../contracts/companions.ts';
import type { Annotation, AnnotationLayer } from '../../../lib/superset/resources/annotation-layers.ts';
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import { attempt, item, onObject, type CompanionContext, type CompanionKind, type KindResult } from './kind.ts';
import { counterpart } from './views.ts';
import { answer, answersOf, type CompanionDocuments } from './kind-documents.ts';

type Entry = Record<string, unknown> & { value?: unknown; sourceType?: unknown };

function entriesOf(params: string | null): { params: Record<string, unknown>; layers: Entry[] } | null {
  if (!params) return null;
  try {
    const parsed = JSON.parse(params) as Record<string, unknown>;
    const layers = Array.isArray(parsed.annotation_layers) ? (parsed.annotation_layers as Entry[]) : [];
    return { params: parsed, layers };
  } catch {
    // expected: params that do not parse carry no annotation layers to rewrite.
    return null;
  }
}

const native = (e: Entry) => e.sourceType === 'NATIVE' && Number.isInteger(Number(e.value));
const keyOf = (a: Pick<Annotation, 'short_descr' | 'start_dttm'>) => `${a.short_descr}\u0000${a.start_dttm ?? ''}`;
const ANNOTATION_FIELDS = ['long_descr', 'end_dttm', 'json_metadata'] as const;

/** `companions/annotation_layers/<name>.yaml`: a layer the charts draw, its annotations, and the id the charts' params name it by. */
export interface LayerDoc {
  name: string;
  descr: string | null;
  id_in_chart_params: number;
  annotations: Array<Omit<Annotation, 'id'>>;
}

const annotationLayersDocuments: CompanionDocuments<LayerDoc> = {
  write({ recording }) {
    const all = answer<AnnotationLayer[]>(recording, 'annotationLayers', 'list') ?? [];
    return answersOf(recording, 'annotationLayers', 'annotations').flatMap(({ args, answer: listed }) => {
      const id = Number(args[0]);
      const layer = all.find((l) => l.id === id);
      if (!layer) return [];
      const annotations = (listed as Annotation[])
        .map(({ id: _id, ...a }) => a)
        .sort((a, b) => `${a.start_dttm}\u0000${a.short_descr}`.localeCompare(`${b.start_dttm}\u0000${b.short_descr}`));
      return [[layer.name, { name: layer.name, descr: layer.descr, id_in_chart_params: id, annotations }] as const];
    });
  },
  replay(docs, x) {
    x.set(
      'annotationLayers',
      'list',
      [],
      docs.map((l) => ({ id: l.id_in_chart_params, name: l.name, descr: l.descr })),
    );
    for (const l of docs)
      x.set(
        'annotationLayers',
        'annotations',
        [l.id_in_chart_params],
        l.annotations.map((a, i) => ({ ...a, id: i + 1 })),
      );
  },
};

export const annotationLayers: CompanionKind<'annotation_layers'> = {
  kind: 'annotation_layers',
  documents: annotationLayersDocuments,
  reads: ['annotationLayers'],
  lists: ['annotationLayers.list'],
  // A re-imported chart loses its native entries although they were in place before its import.
  undoneByImport: true,
  async run(ctx, write): Promise<KindResult> {
    const src = await ctx.sourceView();
    const drawn = src.charts.flatMap((c) =>
      (entriesOf(c.params)?.layers ?? []).filter(native).map((e) => ({ chart: c, id: Number(e.value) })),
    );
    if (!drawn.length) return { items: [] };
    const [sourceLayers, targetLayers, tgt] = await Promise.all([
      ctx.source.annotationLayers.list(),
      ctx.target.annotationLayers.list(),
      ctx.targetView(),
    ]);
    const items: CompanionItem[] = [];
    const targetIdOf = new Map<number, number>();
    for (const id of new Set(drawn.map((d) => d.id))) {
      const layer = sourceLayers.find((l) => l.id === id);
      if (!layer) {
        items.push(item(`layer ${id}`, 'missing', { note: 'a chart draws an annotation layer the source does not have' }));
        continue;
      }
      const there = await copyLayer(ctx, layer, targetLayers.find((l) => l.name === layer.name) ?? null, write, items);
      if (there !== null) targetIdOf.set(id, there);
    }
    for (const c of new Set(drawn.map((d) => d.chart)))
      await pointChart(ctx, c, counterpart(tgt, 'chart', c.uuid), targetIdOf, write, items);
    return { items };
  },
};

/** The layer and its annotations in the target: compared, and with `write` created or updated. Its target id, when it has one. */
async function copyLayer(
  ctx: CompanionContext,
  layer: AnnotationLayer,
  there: AnnotationLayer | null,
  write: boolean,
  items: CompanionItem[],
): Promise<number | null> {
  const annotations = await ctx.source.annotationLayers.annotations(layer.id);
  const theirs = there ? await ctx.target.annotationLayers.annotations(there.id) : [];
  const changed = annotations.filter((a) => {
    const t = theirs.find((x) => keyOf(x) === keyOf(a));
    return !t || ANNOTATION_FIELDS.some((f) => (t[f] ?? null) !== (a[f] ?? null));
  });
  const fields = [...((there?.descr ?? '') !== (layer.descr ?? '') ? ['descr'] : []), ...(changed.length ? ['annotations'] : [])];
  const i = item(layer.name, !there ? 'create' : fields.length ? 'update' : 'unchanged', {
    target_id: there?.id ?? null,
    ...(there && fields.length ? { fields } : {}),
    note: `${annotations.length} annotation(s)${changed.length && there ? `, ${changed.length} to create or update` : ''}`,
  });
  items.push(i);
  if (!write || i.action === 'unchanged') return there?.id ?? null;
  let id = there?.id ?? null;
  await attempt([i], async () => {
    if (id === null) id = await ctx.target.annotationLayers.create(layer);
    else if (fields.includes('descr')) await ctx.target.annotationLayers.update(id, layer);
    for (const a of changed) {
      const { id: _src, ...body } = a;
      const t = theirs.find((x) => keyOf(x) === keyOf(a));
      if (t) await ctx.target.annotationLayers.updateAnnotation(id, t.id, body);
      else await ctx.target.annotationLayers.createAnnotation(id, body);
    }
    return id;
  });
  return id;
}

/**
 * A chart's native layer entries in the target, pointing at the target's layer ids (by the
 * layer's name). Superset's chart import keeps only formula annotations, so an imported chart has
 * none of them: they are put back, the target's own entries of other names kept.
 */
async function pointChart(
  ctx: CompanionContext,
  chart: ObjectMeta,
  there: ObjectMeta | null,
  targetIdOf: Map<number, number>,
  write: boolean,
  items: CompanionItem[],
): Promise<void> {
  const wanted = entriesOf(chart.params)!
    .layers.filter(native)
    .map((e): Entry => ({ ...e, value: targetIdOf.get(Number(e.value)) ?? null }));
  const parsed = entriesOf(there?.params ?? null);
  const on = onObject('chart', chart.name);
  if (!there || !parsed || wanted.some((e) => e.value === null)) {
    items.push(
      item('annotation layer ids', 'create', {
        on,
        note: "the chart's native layer entries are pointed at the target's layers after its import",
      }),
    );
    return;
  }
  const holds = (e: Entry) => parsed.layers.some((t) => t.name === e.name && native(t) && Number(t.value) === e.value);
  const differs = !wanted.every(holds);
  const i = item('annotation layer ids', differs ? 'update' : 'unchanged', {
    on,
    ...(differs ? { fields: ['params.annotation_layers'] } : {}),
  });
  items.push(i);
  if (!write || !differs) return;
  const names = new Set(wanted.map((e) => e.name));
  const layers = [...parsed.layers.filter((t) => !names.has(t.name)), ...wanted];
  if (!isDeepStrictEqual(layers, parsed.layers)) {
    await attempt([i], () =>
      ctx.target.meta.set('chart', there.id, { params: JSON.stringify({ ...parsed.params, annotation_layers: layers }) }),
    );
  }
}
