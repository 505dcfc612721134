/** The review's exports: documentation as Markdown, and validation as a list of checks. */
import type { ImportedFilter } from './filters.ts';
import type { TemplateVariable } from './jinja.ts';

export interface ReviewView {
  id: string;
  title: string | null;
  state: string;
  version: number;
  env_name: string;
  dashboard: { id: number; title: string | null; url: string | null } | null;
  dataset: { id: number; table_name: string; sql: string | null; url: string | null } | null;
  imported_filters: ImportedFilter[];
  template_variables: TemplateVariable[];
  recovery_markers: Array<{ kind: string; ref: string | null; detail: string }>;
  fields: Array<{
    kind: string;
    name: string;
    label: string | null;
    description: string | null;
    provenance: string;
    status: string;
    locked: boolean;
  }>;
  mappings: Array<{ filter_id: string; variable: string | null; variable_kind: string | null; origin: string; approved: boolean }>;
  preview: { status: string; row_count?: number | null; error?: string | null; at_version?: number } | null;
  dictionary: { id: string; name: string; version: number; current_version: number } | null;
}

/** Markdown cell text: no line breaks, pipes escaped. */
const cell = (v: unknown) => (v === null || v === undefined || v === '' ? '—' : String(v).replace(/\r?\n/g, ' ').replace(/\|/g, '\\|'));
const json = (v: unknown) => (v === null || v === undefined ? '—' : JSON.stringify(v));

export function documentationMarkdown(v: ReviewView): string {
  const lines: string[] = [];
  lines.push(`# ${v.dataset ? `Dataset ${v.dataset.table_name}` : (v.title ?? 'Dataset review')}`, '');
  lines.push(`- Review: ${v.id} (state ${v.state}, version ${v.version})`);
  lines.push(`- Environment: ${v.env_name}`);
  if (v.dashboard) lines.push(`- Dashboard: ${v.dashboard.title ?? v.dashboard.id}${v.dashboard.url ? ` (${v.dashboard.url})` : ''}`);
  if (v.dataset) lines.push(`- Dataset: ${v.dataset.table_name} (id ${v.dataset.id})${v.dataset.url ? ` (${v.dataset.url})` : ''}`);
  if (v.dictionary) lines.push(`- Dictionary: ${v.dictionary.name}, version ${v.dictionary.version}`);
  lines.push('');
  if (v.dataset?.sql) lines.push('## SQL', '', '```sql', v.dataset.sql, '```', '');
  lines.push('## Fields', '', '| Kind | Name | Label | Meaning | Provenance | Status |', '|---|---|---|---|---|---|');
  for (const f of v.fields) {
    lines.push(
      `| ${f.kind} | ${cell(f.name)} | ${cell(f.label)} | ${cell(f.description)} | ${f.provenance} | ${f.status}${f.locked ? ' (locked)' : ''} |`,
    );
  }
  lines.push('', '## Filters', '', '| Filter | Column | Value | Normalised | From |', '|---|---|---|---|---|');
  for (const f of v.imported_filters) {
    lines.push(`| ${cell(f.name)} | ${cell(f.column)} | ${cell(json(f.raw_value))} | ${cell(json(f.normalized))} | ${f.value_source} |`);
  }
  lines.push('', '## Template variables and mappings', '', '| Filter | Variable | Kind | Origin | Approved |', '|---|---|---|---|---|');
  for (const m of v.mappings) {
    const f = v.imported_filters.find((x) => x.id === m.filter_id);
    lines.push(
      `| ${cell(f?.name ?? m.filter_id)} | ${cell(m.variable)} | ${cell(m.variable_kind)} | ${m.origin} | ${m.approved ? 'yes' : 'no'} |`,
    );
  }
  const unmapped = v.template_variables.filter((t) => !v.mappings.some((m) => m.variable === t.name));
  if (unmapped.length) lines.push('', `Variables no filter fills: ${unmapped.map((t) => `${t.name} (${t.kind})`).join(', ')}.`);
  if (v.recovery_markers.length) {
    lines.push('', '## Not recovered', '');
    for (const m of v.recovery_markers) lines.push(`- ${m.kind}${m.ref ? ` ${m.ref}` : ''}: ${m.detail}`);
  }
  return `${lines.join('\n')}\n`;
}

export interface Check {
  id: string;
  passed: boolean;
  detail: string;
}

export function validationChecks(v: ReviewView): Check[] {
  const unresolved = v.fields.filter((f) => f.status === 'unresolved');
  const review = v.fields.filter((f) => f.status === 'needs_review');
  const unapproved = v.mappings.filter((m) => !m.approved);
  const stale = v.dictionary && v.dictionary.version !== v.dictionary.current_version;
  return [
    {
      id: 'recovered',
      passed: v.recovery_markers.length === 0,
      detail: v.recovery_markers.length ? v.recovery_markers.map((m) => m.detail).join('; ') : 'everything the link names was recovered',
    },
    { id: 'dataset_chosen', passed: !!v.dataset, detail: v.dataset ? `dataset ${v.dataset.table_name}` : 'no dataset is chosen' },
    {
      id: 'fields_resolved',
      passed: unresolved.length === 0,
      detail: unresolved.length
        ? `unresolved: ${unresolved.map((f) => f.name).join(', ')}`
        : `all ${v.fields.length} fields have a meaning`,
    },
    {
      id: 'fields_reviewed',
      passed: review.length === 0,
      detail: review.length
        ? `needs review after a dictionary change: ${review.map((f) => f.name).join(', ')}`
        : 'no field waits for review',
    },
    {
      id: 'mappings_approved',
      passed: unapproved.length === 0,
      detail: unapproved.length ? `${unapproved.length} mapping(s) not approved` : `${v.mappings.length} mapping(s) approved`,
    },
    {
      id: 'preview',
      passed: v.preview?.status === 'succeeded' && v.preview.at_version === v.version,
      detail: !v.preview
        ? 'no preview yet'
        : v.preview.status !== 'succeeded'
          ? `the preview failed: ${v.preview.error ?? 'unknown reason'}`
          : v.preview.at_version !== v.version
            ? 'the session changed since the preview: preview again'
            : `${v.preview.row_count ?? 0} row(s)`,
    },
    {
      id: 'dictionary_current',
      passed: !stale,
      detail: !v.dictionary
        ? 'no dictionary is used'
        : stale
          ? `ranked against version ${v.dictionary.version}; version ${v.dictionary.current_version} is current`
          : `version ${v.dictionary.version} is current`,
    },
  ];
}
