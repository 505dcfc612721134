import type { Permission } from '../../contracts/permissions.ts';
import { TASK_KINDS } from '../../contracts/task-kinds.ts';
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client, type ScheduleSpec as TemporalSpec } from '@temporalio/client';
import {
  SCHEDULED_RUN_WORKFLOW,
  scheduledRunTaskId,
  type OverlapPolicy,
  type ScheduleKind,
  type ScheduleParams,
  type ScheduleSpec,
} from '../../contracts/schedules.ts';
import type { EnvironmentStore } from '../../db/environments/store.ts';
import type { ScheduleRow, ScheduleStore } from '../../db/schedules/store.ts';
import type { Config } from '../../lib/config.ts';
import { ConflictError, ForbiddenError, UpstreamUnavailableError, ValidationError } from '../../lib/errors.ts';
import { actorLabel, can, isAdmin, type Principal } from '../auth/principal.ts';
import { backupParams, driftParams, toScheduleView, validateParams, type ScheduleView } from './schemas.ts';

const OVERLAP: Record<OverlapPolicy, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

/** What starting a run of each kind needs, beyond schedules:WRITE (a schedule never does more than its creator may). */
/** What a schedule's runs start needs, as the task-kind registry says (a schedule runs with its creator's rights). */
const KIND_PERMISSION: Record<ScheduleKind, Permission | 'admin'> = {
  backup: TASK_KINDS.backup.permission,
  drift_report: TASK_KINDS.drift_report.permission,
  validate: TASK_KINDS.validate.permission,
};
const KIND_WORDS: Record<ScheduleKind, string> = { backup: 'backup', drift_report: 'drift report', validate: 'validation' };
const KIND_PARAMS = { backup: backupParams, drift_report: driftParams, validate: validateParams };

function temporalSpec(spec: ScheduleSpec): TemporalSpec {
  return spec.cron !== undefined ? { cronExpressions: [spec.cron] } : { intervals: [{ every: `${spec.interval_seconds}s` }] };
}

/** Temporal refused the spec (a cron it cannot read): the caller's mistake, not ours. */
function refusal(err: unknown): never {
  // The client turns "Invalid schedule spec" into a TypeError and wraps other gRPC failures in a ServiceError.
  if (err instanceof TypeError)
    throw new ValidationError(`Temporal refused the schedule: ${err.message}`, [{ field: 'body.cron', message: err.message }]);
  const grpc = (err as { cause?: { code?: number; details?: string } })?.cause ?? (err as { code?: number; details?: string });
  if (grpc?.code === 3 /* INVALID_ARGUMENT */)
    throw new ValidationError(`Temporal refused the schedule: ${grpc.details ?? 'invalid'}`, [{ field: 'body', message: 'invalid' }]);
  if (grpc?.code === 14 /* UNAVAILABLE */) throw new UpstreamUnavailableError('Temporal', 'Temporal is not reachable; try again', err);
  throw err;
}

/**
 * Schedules as rows (what to run) and Temporal Schedules (when): the row is written first and
 * removed again when Temporal refuses, so neither outlives the other.
 */
export class ScheduleService {
  private readonly store: ScheduleStore;
  private readonly temporal: Client;
  private readonly config: Config;
  private readonly environments: EnvironmentStore;

  constructor(deps: { store: ScheduleStore; temporal: Client; config: Config; environments: EnvironmentStore }) {
    this.store = deps.store;
    this.temporal = deps.temporal;
    this.config = deps.config;
    this.environments = deps.environments;
  }

  async list(): Promise<ScheduleView[]> {
    return (await this.store.list()).map(toScheduleView);
  }

  /** The row with Temporal's view of it: the next run times and the tasks of the latest runs. */
  async get(id: string): Promise<ScheduleView> {
    const row = await this.store.get(id);
    const view = toScheduleView(row);
    try {
      const d = await this.temporal.schedule.getHandle(row.temporal_schedule_id).describe();
      view.next_runs = d.info.nextActionTimes.map((t) => t.toISOString());
      view.recent_runs = d.info.recentActions.map((a) => ({
        scheduled_at: a.scheduledAt.toISOString(),
        started_at: a.takenAt.toISOString(),
        task_id: scheduledRunTaskId(row.kind, { workflowId: a.action.workflow.workflowId, runId: a.action.workflow.firstExecutionRunId }),
      }));
    } catch {
      // Temporal away: the row still answers.
    }
    return view;
  }

  async create(
    body: {
      name: string;
      kind: ScheduleKind;
      params: ScheduleParams;
      interval_seconds?: number;
      cron?: string;
      overlap?: OverlapPolicy;
      catchup_window_seconds?: number;
      paused?: boolean;
      note?: string;
    },
    principal: Principal,
  ): Promise<ScheduleView> {
    this.mayRun(body.kind, principal);
    await this.checkEnvironments(body.params);
    const spec: ScheduleSpec = {
      ...(body.cron !== undefined ? { cron: body.cron } : { interval_seconds: body.interval_seconds! }),
      overlap: body.overlap ?? 'skip',
      catchup_window_seconds: body.catchup_window_seconds ?? 300,
    };
    const row = await this.store.create({
      name: body.name,
      kind: body.kind,
      spec,
      params: body.params,
      paused: body.paused ?? false,
      note: body.note ?? null,
      // Made with a key: the person it acts for, and the key (revoking it stops the runs).
      created_by: principal.userId,
      created_by_username: principal.username,
      created_by_api_key_id: principal.apiKeyId ?? null,
    });
    try {
      await this.temporal.schedule.create({
        scheduleId: row.temporal_schedule_id,
        spec: temporalSpec(spec),
        action: {
          type: 'startWorkflow',
          workflowType: SCHEDULED_RUN_WORKFLOW,
          workflowId: `scheduled-${row.id}`,
          args: [{ scheduleId: row.id }],
          taskQueue: this.config.TEMPORAL_TASK_QUEUE,
          staticSummary: `Switchyard schedule '${row.name}': ${KIND_WORDS[row.kind]}`,
        },
        policies: { overlap: OVERLAP[spec.overlap], catchupWindow: `${spec.catchup_window_seconds}s` },
        state: { paused: row.paused, ...(row.note ? { note: row.note } : {}) },
        memo: { switchyard_schedule_id: row.id, created_by: actorLabel(principal) },
      });
    } catch (err) {
      await this.store.delete(row.id);
      refusal(err);
    }
    return toScheduleView(row);
  }

  async update(
    id: string,
    body: {
      name?: string;
      interval_seconds?: number;
      cron?: string;
      overlap?: OverlapPolicy;
      catchup_window_seconds?: number;
      params?: Record<string, unknown>;
    },
    principal: Principal,
  ): Promise<ScheduleView> {
    const row = await this.store.get(id);
    this.mayRun(row.kind, principal);
    let params: ScheduleParams | undefined;
    if (body.params) {
      const parsed = KIND_PARAMS[row.kind].safeParse(body.params);
      if (!parsed.success)
        throw new ValidationError(
          'params do not fit the schedule kind',
          parsed.error.issues.map((i) => ({ field: `body.params.${i.path.join('.')}`, message: i.message })),
        );
      params = parsed.data as ScheduleParams;
      await this.checkEnvironments(params);
    }
    const timing =
      body.interval_seconds !== undefined
        ? { interval_seconds: body.interval_seconds }
        : body.cron !== undefined
          ? { cron: body.cron }
          : undefined;
    const spec: ScheduleSpec = {
      ...(timing ?? (row.spec.cron !== undefined ? { cron: row.spec.cron } : { interval_seconds: row.spec.interval_seconds! })),
      overlap: body.overlap ?? row.spec.overlap,
      catchup_window_seconds: body.catchup_window_seconds ?? row.spec.catchup_window_seconds,
    };
    try {
      await this.temporal.schedule.getHandle(row.temporal_schedule_id).update((prev) => ({
        ...prev,
        spec: temporalSpec(spec),
        policies: { ...prev.policies, overlap: OVERLAP[spec.overlap], catchupWindow: `${spec.catchup_window_seconds}s` },
      }));
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) refusal(err);
    }
    const updated = await this.store.update(id, { ...(body.name ? { name: body.name } : {}), spec, ...(params ? { params } : {}) });
    return toScheduleView(updated);
  }

  async pause(id: string, note: string | undefined, principal: Principal): Promise<ScheduleView> {
    const row = await this.store.get(id);
    const text = note ?? `paused by ${actorLabel(principal)}`;
    await this.handle(row, (h) => h.pause(text));
    return toScheduleView(await this.store.update(id, { paused: true, note: text }));
  }

  async resume(id: string, principal: Principal): Promise<ScheduleView> {
    const row = await this.store.get(id);
    await this.handle(row, (h) => h.unpause(`resumed by ${actorLabel(principal)}`));
    return toScheduleView(await this.store.update(id, { paused: false, note: null }));
  }

  /** One run now, paused or not (the overlap policy still applies). */
  async trigger(id: string, principal: Principal): Promise<void> {
    const row = await this.store.get(id);
    this.mayRun(row.kind, principal);
    await this.handle(row, (h) => h.trigger());
  }

  async remove(id: string): Promise<void> {
    const row = await this.store.get(id);
    try {
      await this.temporal.schedule.getHandle(row.temporal_schedule_id).delete();
    } catch (err) {
      // Deleted in the Temporal web UI already: the row goes too.
      if (!(err instanceof ScheduleNotFoundError)) refusal(err);
    }
    await this.store.delete(row.id);
  }

  private async handle(row: ScheduleRow, act: (h: ReturnType<Client['schedule']['getHandle']>) => Promise<void>): Promise<void> {
    try {
      await act(this.temporal.schedule.getHandle(row.temporal_schedule_id));
    } catch (err) {
      if (err instanceof ScheduleNotFoundError)
        throw new ConflictError(
          `Temporal holds no schedule ${row.temporal_schedule_id} (deleted in its web UI?); delete this schedule and create it again`,
          'temporal_schedule_missing',
        );
      refusal(err);
    }
  }

  private mayRun(kind: ScheduleKind, principal: Principal): void {
    const needed = KIND_PERMISSION[kind];
    if (!(needed === 'admin' ? isAdmin(principal) : can(principal, needed)))
      throw new ForbiddenError(`A ${kind} schedule runs with its creator's rights: it needs ${KIND_PERMISSION[kind]} too`);
  }

  private async checkEnvironments(params: ScheduleParams): Promise<void> {
    for (const envId of 'env_id' in params ? [params.env_id] : [params.source_env_id, params.target_env_id])
      await this.environments.get(envId);
  }
}
