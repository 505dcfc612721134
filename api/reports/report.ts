import { isItemsResult, type ItemOutcome, type OutcomeClass } from '../../contracts/outcomes.ts';
import { retryRequestFor } from '../../contracts/task-kinds.ts';
import type { TaskRecord } from '../../db/tasks/store.ts';
import { companionDiagnostics, companionDriftDiagnostics } from './companion-diagnostics.ts';
import { toUtcIso, toEpochMs } from '../../lib/timestamps.ts';

/**
 * A report summarises one task for a person: what was asked, what came of it item by item, what
 * failed where with the upstream's own words, and what to do next (with the exact request).
 * It reads only the shared outcome shape (contracts/outcomes.ts: `result.items[]` and
 * `result.next_actions[]`), so every task kind gets the same report; a task that failed as a
 * whole is described from its `error`.
 */

export interface NextAction {
  action: string;
  description: string;
  item_id?: number | string | null;
  request?: { method: string; path: string; body: unknown } | null;
}

export interface Diagnostic {
  severity: 'error' | 'warning' | 'info';
  /** Where it happened: the dashboard, and the step or object when known. */
  where: { item_id?: number | string | null; kind?: string; title?: string | null; step?: string; object?: string; task?: string };
  message: string;
  /** The upstream's (Superset's) own answer, as it gave it. */
  upstream_error?: unknown;
}

export interface ItemLine {
  kind: string;
  id: number | string | null;
  title: string | null;
  status: string;
  outcome: OutcomeClass;
  error: string | null;
  detail: Record<string, unknown>;
}

export interface ReportSummary {
  headline: string;
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  planned: number;
  not_started: number;
}

export interface LogLine {
  ts: Date | string;
  level: string;
  source: string;
  activity_type: string | null;
  attempt: number | null;
  message: string;
}

type Entry = Record<string, unknown>;
const isObj = (v: unknown): v is Entry => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

export function itemLines(task: Pick<TaskRecord, 'result'>): ItemLine[] {
  if (!isItemsResult(task.result)) return [];
  return (task.result.items as ItemOutcome[]).filter(isObj).map((e) => {
    const { kind, id, title, status, outcome, error, ...rest } = e;
    return { kind, id, title: str(title), status: String(status), outcome, error: str(error), detail: rest as Entry };
  });
}

export function summarise(
  task: Pick<TaskRecord, 'status' | 'type' | 'result' | 'error' | 'params' | 'dashboard_ids' | 'progress'>,
): ReportSummary {
  const lines = itemLines(task);
  const count = (o: ItemLine['outcome']) => lines.filter((l) => l.outcome === o).length;
  const requested = Math.max(lines.length, task.dashboard_ids.length, task.progress?.total ?? 0);
  const s = {
    total: requested,
    succeeded: count('succeeded'),
    failed: count('failed'),
    skipped: count('skipped'),
    planned: count('planned'),
    not_started: lines.length ? Math.max(0, requested - lines.length) : 0,
  };
  return { headline: headline(task, s, lines.length > 0, lines[0]?.kind ?? 'item'), ...s };
}

function headline(
  task: Pick<TaskRecord, 'status' | 'type' | 'error'>,
  s: Omit<ReportSummary, 'headline'>,
  perItem: boolean,
  noun: string,
): string {
  const what = task.type.replace(/_/g, ' ');
  if (task.status === 'PENDING') return `${what} task waiting to start`;
  if (task.status === 'RUNNING' || task.status === 'AWAITING_APPROVAL')
    return `${what} task ${task.status === 'RUNNING' ? 'running' : 'awaiting approval'}`;
  if (!perItem) {
    if (task.status === 'SUCCEEDED') return `${what} task succeeded`;
    if (task.status === 'CANCELLED') return `${what} task cancelled`;
    return `${what} task failed: ${task.error?.message ?? 'no reason recorded'}`;
  }
  const parts = [
    `${s.succeeded} of ${s.total} ${noun}(s) ${task.type === 'backup' ? 'backed up' : task.type === 'restore' ? 'restored' : 'succeeded'}`,
  ];
  if (s.failed) parts.push(`${s.failed} failed`);
  if (s.skipped) parts.push(`${s.skipped} skipped`);
  if (s.planned) parts.push(`${s.planned} planned (dry run)`);
  if (s.not_started) parts.push(`${s.not_started} not started`);
  if (task.status === 'CANCELLED') parts.push('cancelled');
  return parts.join(', ');
}

function diagnostics(task: TaskRecord, lines: ItemLine[]): Diagnostic[] {
  return [...lines.flatMap(itemDiagnostics), ...taskDiagnostics(task, lines)];
}

/** One item's lines: how it ended, then what its steps found (verification, collisions, fields, RLS, companions, warnings). */
function itemDiagnostics(l: ItemLine): Diagnostic[] {
  const out: Diagnostic[] = [];
  const d = l.detail;
  const where = { item_id: l.id, kind: l.kind, title: l.title };
  if (l.outcome === 'failed') {
    out.push({
      severity: 'error',
      where: { ...where, ...(str(d.step) ? { step: str(d.step)! } : {}) },
      message: l.error ?? `finished with status ${l.status}`,
      ...(d.upstream_error !== undefined && d.upstream_error !== null ? { upstream_error: d.upstream_error } : {}),
    });
  } else if (l.outcome === 'skipped' && l.error) {
    out.push({ severity: 'warning', where, message: l.error });
  }
  // Migration specifics, read when present: verification failures, collisions, dropped fields.
  out.push(...verificationLines(d.verification, where));
  for (const c of Array.isArray(d.collisions) ? d.collisions.filter(isObj) : []) {
    out.push({
      severity: 'warning',
      where: { ...where, object: String(c.kind ?? 'object') },
      message: `${c.detail}${c.resolution ? `: ${c.resolution}` : ''}`,
    });
  }
  out.push(...fieldLines(d, where));
  out.push(...rlsLines(d.rls, where));
  out.push(...companionDiagnostics(d.companions, where), ...companionDriftDiagnostics(d, where), ...warningLines(d.warnings, where));
  return out;
}

/** A verification's charts: those that fail, fail in the source too, or could not be verified. */
function verificationLines(value: unknown, where: Diagnostic['where']): Diagnostic[] {
  const out: Diagnostic[] = [];
  const verification = isObj(value) ? value : undefined;
  for (const c of Array.isArray(verification?.charts) ? verification.charts.filter(isObj) : []) {
    const chartWhere = { ...where, step: 'verification', object: `chart ${c.id} '${c.name ?? ''}'` };
    if (c.ok === false) out.push({ severity: 'error', where: chartWhere, message: String(c.error ?? c.reason ?? 'chart query failed') });
    else if (c.classification === 'failing_in_source')
      out.push({
        severity: 'warning',
        where: chartWhere,
        message: `fails in the source too (not the migration's doing): ${String(c.source_error ?? c.error ?? '')}`,
      });
    else if (c.classification === 'not_verifiable')
      out.push({ severity: 'info', where: chartWhere, message: `not verifiable: ${String(c.reason ?? '')}` });
  }
  return out;
}

/** Fields the target rejected (dropped), then fields it required that the source does not export (set to its defaults). */
function fieldLines(d: ItemLine['detail'], where: Diagnostic['where']): Diagnostic[] {
  const out: Diagnostic[] = [];
  const dropped = Array.isArray(d.dropped_fields) ? d.dropped_fields.filter(isObj) : [];
  if (dropped.length) {
    out.push({
      severity: 'info',
      where: { ...where, step: 'import' },
      message: `the target rejected ${fieldCount(dropped)} field(s), dropped: ${dropped.map((f) => fieldLine(f, 'dropped from')).join('; ')}`,
    });
  }
  const defaulted = Array.isArray(d.defaulted_fields) ? d.defaulted_fields.filter(isObj) : [];
  if (defaulted.length) {
    out.push({
      severity: 'info',
      where: { ...where, step: 'import' },
      message: `the target required ${fieldCount(defaulted)} field(s) the source does not export, set to its defaults: ${defaulted.map((f) => `${fieldLine(f, 'set on')} = ${JSON.stringify(f.value)}`).join('; ')}`,
    });
  }
  return out;
}

/** The task's own lines, after its items': a failure no item explains, its approval, a cancellation, retention. */
function taskDiagnostics(task: TaskRecord, lines: ItemLine[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (task.status === 'FAILED' && !lines.some((l) => l.outcome === 'failed') && task.error) {
    const upstream = Array.isArray(task.error.details) ? task.error.details.find((x) => isObj(x) && 'upstream_error' in x) : undefined;
    out.push({
      severity: 'error',
      where: { task: task.id },
      message: task.error.message + (task.error.type ? ` (${task.error.type})` : ''),
      ...(isObj(upstream) ? { upstream_error: upstream.upstream_error } : {}),
    });
  }
  // A protected environment's gate: who let the task through (a refusal is the cancellation's message).
  if (task.approval?.decision === 'approve')
    out.push({
      severity: 'info',
      where: { task: task.id, step: 'approval' },
      message: `approved by ${task.approval.by}${task.approval.comment ? `: ${task.approval.comment}` : ''} (the environment is protected)`,
    });
  if (task.status === 'AWAITING_APPROVAL')
    out.push({
      severity: 'info',
      where: { task: task.id, step: 'approval' },
      message: 'waiting for another person to approve: the task writes into a protected environment',
    });
  if (task.status === 'CANCELLED')
    out.push({ severity: 'warning', where: { task: task.id }, message: task.error?.message ?? 'cancelled on request' });
  const result = isObj(task.result) ? task.result : {};
  if (isObj(result.retention) && result.retention.error)
    out.push({ severity: 'warning', where: { task: task.id, step: 'retention' }, message: String(result.retention.error) });
  return out;
}

/** Row-level security: differences ignored on request, rules written, target-only rules left in place. */
function rlsLines(value: unknown, where: Diagnostic['where']): Diagnostic[] {
  const out: Diagnostic[] = [];
  const rls = isObj(value) ? value : undefined;
  if (rls) {
    const differences = Array.isArray(rls.differences) ? rls.differences.filter(isObj) : [];
    if (rls.ignored_by_request === true && differences.length) {
      out.push({
        severity: 'warning',
        where: { ...where, step: 'rls' },
        message: `row-level security differs between source and target and the requester chose to ignore it (rls: ignore): ${differences.map((x) => `rule '${x.rule}' ${String(x.difference).replace(/_/g, ' ')}`).join('; ')}`,
      });
    }
    const writes = Array.isArray(rls.writes) ? rls.writes.filter((w) => isObj(w) && w.done === true && w.action !== 'unchanged') : [];
    if (writes.length)
      out.push({
        severity: 'info',
        where: { ...where, step: 'rls' },
        message: `row-level-security rules written to the target: ${writes.map((w) => `${w.action} '${w.rule}'`).join(', ')}`,
      });
    const left = Array.isArray(rls.left_in_target) ? rls.left_in_target : [];
    if (left.length)
      out.push({
        severity: 'warning',
        where: { ...where, step: 'rls' },
        message: `rules only the target has were left in place (copying never removes them): ${left.map((n) => `'${n}'`).join(', ')}`,
      });
  }
  return out;
}

/** What a step could not check (contracts/migration.ts OutcomeWarning, with its step), or a plain line. */
function warningLines(warnings: unknown, where: Diagnostic['where']): Diagnostic[] {
  return (Array.isArray(warnings) ? warnings : []).map((w) =>
    isObj(w)
      ? { severity: 'warning', where: { ...where, ...(str(w.step) ? { step: str(w.step)! } : {}) }, message: String(w.message ?? '') }
      : { severity: 'warning', where, message: String(w) },
  );
}

function nextActions(task: TaskRecord, lines: ItemLine[]): NextAction[] {
  const out: NextAction[] = [];
  const seen = new Set<string>();
  const add = (a: NextAction) => {
    const key = `${a.action}|${a.item_id ?? ''}|${JSON.stringify(a.request ?? null)}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(a);
    }
  };

  const result = isObj(task.result) ? task.result : {};
  if (task.status === 'AWAITING_APPROVAL')
    add({
      action: 'approve',
      description: 'Another person with tasks:APPROVE approves (or rejects with POST /api/tasks/{task_id}/reject); the requester cannot',
      request: { method: 'POST', path: `/api/tasks/${task.id}/approve`, body: {} },
    });
  const taskLevel = Array.isArray(result.next_actions)
    ? result.next_actions.map((a) => asAction(a)).filter((a): a is NextAction => !!a)
    : [];
  // One call for every failed dashboard, unless the task already proposed one.
  const retry = taskLevel.some((a) => a.action === 'retry_failed') ? undefined : retryFailed(task, lines);
  if (retry) add(retry);
  for (const a of taskLevel) add(a);
  for (const l of lines) {
    const list = Array.isArray(l.detail.next_actions) ? l.detail.next_actions : [];
    for (const v of list) {
      const a = asAction(v, l.id);
      if (a) add(a);
    }
  }
  for (const a of statusActions(task, lines)) add(a);
  return out;
}

/** A next action as a task or an item gave it: a plain string is advice. */
function asAction(v: unknown, itemId?: number | string | null): NextAction | undefined {
  if (typeof v === 'string') return { action: 'advice', description: v, ...(itemId !== undefined ? { item_id: itemId } : {}) };
  if (!isObj(v)) return undefined;
  const request = isObj(v.request)
    ? { method: String(v.request.method ?? 'GET'), path: String(v.request.path ?? ''), body: v.request.body ?? null }
    : null;
  return {
    action: String(v.action ?? 'advice'),
    description: String(v.description ?? ''),
    ...(itemId !== undefined ? { item_id: itemId } : {}),
    ...(request ? { request } : {}),
  };
}

/** One call that retries every failed item, when the task's kind has a retry request. */
function retryFailed(task: TaskRecord, lines: ItemLine[]): NextAction | undefined {
  const failed = lines.filter((l) => l.outcome === 'failed' && l.id !== null);
  if (!failed.length) return undefined;
  const request = retryRequestFor(
    task.type,
    task.params,
    failed.map((l) => l.id!),
  );
  if (!request) return undefined;
  return {
    action: 'retry_failed',
    description: `Retry the ${failed.length} failed ${failed[0]!.kind}(s) with one call, once their causes (below) are fixed`,
    request,
  };
}

/** What the task's status offers: running it again, following or cancelling it, reading its warnings and errors. */
function statusActions(task: TaskRecord, lines: ItemLine[]): NextAction[] {
  const out: NextAction[] = [];
  if (task.status === 'FAILED' && !lines.length) {
    const request = retryRequestFor(task.type, task.params, null);
    if (request) out.push({ action: 'retry', description: 'Run the same task again once the cause is fixed', request });
  }
  if (task.status === 'PENDING' || task.status === 'RUNNING') {
    out.push({
      action: 'follow',
      description: 'Follow the task live',
      request: { method: 'GET', path: `/api/tasks/${task.id}/logs/stream`, body: null },
    });
    out.push({
      action: 'cancel',
      description: 'Cancel the task',
      request: { method: 'POST', path: `/api/tasks/${task.id}/cancel`, body: null },
    });
  }
  if (task.status === 'FAILED' || lines.some((l) => l.outcome === 'failed')) {
    out.push({
      action: 'read_logs',
      description: 'Read the warnings and errors the task logged',
      request: { method: 'GET', path: `/api/tasks/${task.id}/logs?level=WARN,ERROR`, body: null },
    });
  }
  return out;
}

export function durationMs(task: Pick<TaskRecord, 'started_at' | 'finished_at'>): number | null {
  const a = toEpochMs(task.started_at);
  const b = toEpochMs(task.finished_at);
  return a !== null && b !== null ? b - a : null;
}

export function reportListItem(task: TaskRecord) {
  const summary = summarise(task);
  return {
    report_id: task.id,
    task_id: task.id,
    task_type: task.type,
    status: task.status,
    owner_username: task.owner_username,
    env_ids: task.env_ids,
    dashboard_ids: task.dashboard_ids,
    created_at: toUtcIso(task.created_at)!,
    started_at: toUtcIso(task.started_at),
    finished_at: toUtcIso(task.finished_at),
    duration_ms: durationMs(task),
    summary,
    has_failures: summary.failed > 0 || task.status === 'FAILED',
  };
}

export function buildReport(task: TaskRecord, logs: LogLine[], temporalUiUrl?: string) {
  const lines = itemLines(task);
  const result = isObj(task.result) ? task.result : {};
  const { items: _i, next_actions: _n, ...resultRest } = result;
  return {
    ...reportListItem(task),
    params: task.params,
    progress: task.progress,
    items: lines.map((l) => ({
      kind: l.kind,
      id: l.id,
      title: l.title,
      status: l.status,
      outcome: l.outcome,
      error: l.error,
      ...l.detail,
    })),
    result: Object.keys(resultRest).length ? resultRest : null,
    error: task.error,
    diagnostics: [...diagnostics(task, lines), ...verificationStateLines(lines)],
    next_actions: nextActions(task, lines),
    log_excerpt: logs.map((l) => ({
      ts: toUtcIso(l.ts),
      level: l.level,
      source: l.source,
      ...(l.activity_type ? { activity_type: l.activity_type } : {}),
      ...(l.attempt ? { attempt: l.attempt } : {}),
      message: l.message,
    })),
    links: {
      task: `/api/tasks/${task.id}`,
      logs: `/api/tasks/${task.id}/logs`,
      ...(temporalUiUrl ? { temporal_ui: temporalUiUrl } : {}),
    },
  };
}

/**
 * A migration's dashboards this task did not verify itself: an `info` line each for one that
 * carried an earlier task's verification (`verification: "if_changed"`: whose, when, why), a
 * `warning` for one not verified after an import (the item's `verification_state` says why).
 */
function verificationStateLines(lines: ItemLine[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const l of lines) {
    const s = isObj(l.detail.verification_state) ? l.detail.verification_state : undefined;
    const where = { item_id: l.id, kind: l.kind, title: l.title, step: 'verification' };
    if (s?.state === 'carried')
      out.push({
        severity: 'info',
        where,
        message: `verification carried from task ${str(s.from_task_id) ?? '?'}${str(s.at) ? ` (verified at ${str(s.at)})` : ''}: ${str(s.reason) ?? 'not checked again'}`,
      });
    else if (s?.state === 'not_verified' && (l.status === 'imported' || l.status === 'unchanged'))
      out.push({ severity: 'warning', where, message: `not verified: ${str(s.reason) ?? 'its verification did not finish'}` });
  }
  return out;
}

/** Fields dropped or defaulted, counted over aggregated entries (and over entries from before aggregation, one each). */
function fieldCount(list: Array<Record<string, unknown>>): number {
  return list.reduce((n, f) => n + (typeof f.count === 'number' ? f.count : 1), 0);
}

/**
 * One aggregated field: "field `columns.*.datetime_format` of datasets dropped from 328 columns
 * (e.g. dataset "sales")"; an entry from before aggregation reads as it did.
 */
function fieldLine(f: Record<string, unknown>, verb: string): string {
  if (typeof f.count !== 'number') return `${f.object ?? f.file}.${f.field}`;
  const field = String(f.field);
  const list = field.includes('*')
    ? field
        .slice(0, field.lastIndexOf('*') - 1)
        .split('.')
        .pop()
    : undefined;
  const examples = Array.isArray(f.examples) ? f.examples.filter(isObj).map((e) => String(e.object ?? e.file)) : [];
  const seen = [...new Set(examples)];
  const noun = list ?? `${f.kind}s`;
  return `field \`${field}\` of ${f.kind}s ${verb} ${f.count} ${f.count === 1 ? noun.replace(/s$/, '') : noun}${seen.length ? ` (e.g. ${seen.join(', ')})` : ''}`;
}
