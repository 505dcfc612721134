/**
 * What a person reads on a terminal for a task or its report: a headline, one row per item (with,
 * for a migration, how many objects would be or were created, updated or left unchanged), and
 * the next actions, each with the command to run. JSON and YAML print the API's answer instead.
 */
import Table from 'cli-table3';

interface Difference {
  field: string;
  source: unknown;
  target: unknown;
}
interface ObjectLike {
  kind?: string;
  name?: string;
  action?: string;
  differences?: Difference[];
}
interface Action {
  action?: string;
  description: string;
  item_id?: unknown;
  request?: { method: string; path: string; body?: unknown } | null;
}
export interface ItemLike {
  id?: unknown;
  title?: string | null;
  status?: string;
  outcome?: string;
  error?: string | null;
  objects?: ObjectLike[];
  next_actions?: Action[];
  /** A migration's: whether the task verified it, or carried an earlier task's verification (contracts/migration.ts VerificationState). */
  verification_state?: { state: string; at?: string | null; from_task_id?: string | null; checked?: string; reason?: string };
}
export interface TaskLike {
  id: string;
  status: string;
  type?: string;
  summary?: string | null;
  headline?: string;
  items: ItemLike[];
  next_actions: Action[];
  dryRun?: boolean;
}

const ACTIONS = ['create', 'update', 'unchanged'] as const;

/** Object counts of one item by action; null when the item lists no objects. */
function counts(item: ItemLike): Record<(typeof ACTIONS)[number], number> | null {
  if (!item.objects?.length) return null;
  const c = { create: 0, update: 0, unchanged: 0 };
  for (const o of item.objects) if (o.action && o.action in c) c[o.action as keyof typeof c]++;
  return c;
}

/** An item's verification state in a few words: verified (when; an unchanged one's target checked again), carried (from which task, when), not verified. */
export function verificationCell(i: ItemLike): string {
  const s = i.verification_state;
  if (!s) return '';
  const at = s.at ? s.at.replace('T', ' ').slice(0, 19) : 'time not recorded';
  if (s.state === 'verified') return `verified ${at}${s.checked === 'unchanged_target' ? ' (target checked again)' : ''}`;
  if (s.state === 'carried') return `carried from task ${s.from_task_id ?? '?'} (${at})`;
  return 'not verified';
}

const shorten = (v: unknown) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s === undefined ? '—' : s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

/** The command to run for a suggested request: a `switchyard` command where one exists, else the HTTP call. */
export function commandFor(a: Action): string | null {
  const r = a.request;
  if (!r) return null;
  const body = (r.body ?? {}) as Record<string, unknown>;
  if (r.method === 'POST' && r.path === '/api/dashboards/migrate' && Array.isArray(body.dashboard_ids)) {
    const flags = [
      `--from ${String(body.source_env_id)}`,
      `--to ${String(body.target_env_id)}`,
      `--dashboards ${body.dashboard_ids.join(',')}`,
    ];
    if (body.dry_run) flags.push('--dry-run');
    for (const m of (body.db_mappings ?? []) as Array<{ source_database_id: number; target_database_id: number }>)
      flags.push(`--map ${m.source_database_id}:${m.target_database_id}`);
    return `switchyard migrate ${flags.join(' ')} --wait`;
  }
  const task = /^\/api\/tasks\/([^/]+)\/(retry|cancel)$/.exec(r.path);
  if (task) return task[2] === 'cancel' ? `switchyard tasks cancel ${task[1]}` : `${r.method} ${r.path}`;
  return `${r.method} ${r.path}${r.body ? ` ${JSON.stringify(r.body)}` : ''}`;
}

/** The task (or report) for a person: headline, item table, differences with --diff, next actions. */
export function renderTask(t: TaskLike, opts: { diff?: boolean } = {}): string {
  const out: string[] = [];
  const failed = t.items.filter((i) => i.outcome === 'failed').length;
  out.push(`${t.type ? `${t.type} ` : ''}${t.id}  ${t.status}${t.dryRun ? '  (dry run: nothing written)' : ''}`);
  out.push(t.headline ?? t.summary ?? `${t.items.length} item(s), ${failed} failed`);
  if (t.items.length) {
    const withCounts = t.items.some((i) => counts(i));
    const withStates = t.items.some((i) => i.verification_state);
    const head = [
      '',
      'ID',
      'TITLE',
      'STATUS',
      ...(withCounts ? ['CREATE', 'UPDATE', 'UNCHANGED'] : []),
      ...(withStates ? ['VERIFICATION'] : []),
      'ERROR',
    ];
    const table = new Table({
      head,
      style: { head: [], border: [] },
      wordWrap: true,
      colWidths: head.map((h) => (h === 'ERROR' ? 50 : h === 'TITLE' ? 32 : null)) as number[],
    });
    for (const i of t.items) {
      const c = counts(i);
      table.push([
        i.outcome === 'failed' ? '✗' : '✓',
        String(i.id ?? ''),
        i.title ?? '',
        i.status ?? '',
        ...(withCounts ? (c ? [c.create, c.update, c.unchanged].map(String) : ['', '', '']) : []),
        ...(withStates ? [verificationCell(i)] : []),
        i.error ?? '',
      ]);
    }
    out.push(table.toString());
  }
  if (opts.diff) out.push(...renderDiff(t.items));
  const actions = [...t.items.flatMap((i) => (i.next_actions ?? []).map((a) => ({ ...a, item_id: a.item_id ?? i.id }))), ...t.next_actions];
  const seen = new Set<string>();
  const lines = actions.flatMap((a) => {
    const cmd = commandFor(a);
    const key = `${a.description}|${cmd}`;
    if (seen.has(key)) return [];
    seen.add(key);
    return [
      `  • ${a.item_id !== undefined && a.item_id !== null ? `[${String(a.item_id)}] ` : ''}${a.description}`,
      ...(cmd ? [`      $ ${cmd}`] : []),
    ];
  });
  if (failed) lines.push(`  • the log of what happened`, `      $ switchyard tasks logs ${t.id}`);
  if (lines.length) out.push('Next:', ...lines);
  return out.join('\n');
}

/** Per object that would change or changed: its differences, field by field. */
function renderDiff(items: ItemLike[]): string[] {
  const out: string[] = [];
  for (const i of items) {
    const changed = (i.objects ?? []).filter((o) => o.action === 'create' || o.action === 'update');
    if (!changed.length) continue;
    out.push(`Differences of ${String(i.id)} ${i.title ?? ''}:`);
    for (const o of changed) {
      out.push(
        `  ${o.action === 'create' ? '+' : '~'} ${o.kind ?? 'object'} ${o.name ?? ''}${o.action === 'create' ? ' (new in the target)' : ''}`,
      );
      for (const d of o.differences ?? []) out.push(`      ${d.field}: ${shorten(d.target)} → ${shorten(d.source)}`);
    }
  }
  return out.length ? out : ['Differences: none'];
}
