/**
 * The Jinja template variables a dataset's SQL reads: `url_param('x')`, `filter_values('col')`,
 * `get_filters('col')` and plain `{{ var }}`. Read from the text with patterns, not evaluated:
 * what Superset renders is what the preview shows.
 */
export type VariableKind = 'url_param' | 'filter_values' | 'get_filters' | 'plain';

export interface TemplateVariable {
  name: string;
  kind: VariableKind;
  /** The default the SQL gives (`url_param('x', 'dflt')`), or the dataset's template_params value. */
  default: unknown;
}

const CALL = /\b(url_param|filter_values|get_filters)\s*\(\s*(['"])((?:(?!\2).){1,200})\2\s*(?:,\s*(['"])((?:(?!\4).){0,500})\4)?/g;
const EXPRESSION = /\{\{-?\s*([\s\S]*?)\s*-?\}\}/g;
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names Superset's template context provides itself: not variables a person fills. */
const BUILTIN = new Set([
  'url_param',
  'filter_values',
  'get_filters',
  'current_username',
  'current_user_id',
  'current_user_email',
  'current_user_roles',
  'current_user_rls_rules',
  'cache_key_wrapper',
  'dataset',
  'metric',
  'columns',
  'from_dttm',
  'to_dttm',
  'groupby',
  'metrics',
  'row_limit',
  'row_offset',
  'time_column',
  'time_grain',
  'table_columns',
  'filter',
  'get_time_filter',
  'presto',
  'hive',
  'true',
  'false',
  'none',
  'True',
  'False',
  'None',
  'loop',
  'range',
  'ds',
  'macros',
]);

export function templateVariables(sql: string | null | undefined, templateParams: Record<string, unknown> = {}): TemplateVariable[] {
  if (!sql) return [];
  const out = new Map<string, TemplateVariable>();
  const add = (v: TemplateVariable) => {
    const key = `${v.kind}:${v.name}`;
    if (!out.has(key)) out.set(key, v);
  };
  for (const m of sql.matchAll(CALL)) {
    add({ name: m[3]!, kind: m[1] as VariableKind, default: m[5] ?? (m[1] === 'url_param' ? (templateParams[m[3]!] ?? null) : null) });
  }
  // Plain variables: a bare name, possibly followed by filters (`{{ region | upper }}`) or an attribute.
  const blocks = [...sql.matchAll(EXPRESSION)].map((m) => m[1]!);
  const statements = [...sql.matchAll(/\{%-?\s*(?:if|elif|for\s+\w+\s+in)\s+([\s\S]*?)-?%\}/g)].map((m) => m[1]!);
  for (const text of [...blocks, ...statements]) {
    const head = text.split(/[|.([\s]/, 1)[0]!.trim();
    if (!IDENT.test(head) || BUILTIN.has(head)) continue;
    add({ name: head, kind: 'plain', default: templateParams[head] ?? null });
  }
  return [...out.values()];
}

/** The dataset's `template_params` (a JSON string in Superset) as an object; anything else is empty. */
export function parseTemplateParams(raw: unknown): Record<string, unknown> {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) return raw as Record<string, unknown>;
  if (typeof raw !== 'string' || !raw.trim()) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    // expected: a template context that does not parse is empty.
    return {};
  }
}
