/**
 * What a task kind's entry declares; the registry (TASK_KINDS, task-kinds.ts) adds its name, the
 * task type, from its key. Apart from the registry so that an entry can live beside its kind's
 * contract (contracts/<kind>.ts) with no import cycle.
 */
import type { Permission } from './permissions.ts';

/** Environment names by id, for summaries (an unknown id reads as itself). */
export type EnvNames = (envId: string) => string;

/**
 * `I` is the workflow's input. `W` is the workflow's name as a literal type:
 * workflows/registry-check.ts holds it to workflows/index.ts's exports (contracts/ imports
 * nothing, so the check lives there).
 */
export interface TaskKindEntry<I, W extends string = string> {
  /** The exported workflow function that runs it. */
  workflow: W;
  /** Needed to start it; 'admin' for deployment-level kinds. */
  permission: Permission | 'admin';
  envIds(input: I): string[];
  /**
   * The environment whose Superset this task changes, or null when it changes none (a dry run, a
   * backup, suggestions waiting for review). A task writing into a protected environment waits
   * for another person's approval first (see approvalFor).
   */
  writesInto(input: I): string | null;
  dashboardIds(input: I): string[];
  /**
   * The environment pair whose rules and saved database mappings the task applies (source null:
   * none): the task service freezes them into the input (`frozen`) when it creates the task.
   */
  frozenPair?(input: I): { sourceEnvId: string | null; targetEnvId: string } | null;
  /** One line for the Temporal console (the workflow's static summary), and optional details. */
  describe(input: I, names: EnvNames): { summary: string; details?: string };
  /** The request that runs the same task again for some of its items (null: not retryable by request). */
  retry?(params: Record<string, unknown>, itemIds: Array<number | string> | null): { method: string; path: string; body: unknown } | null;
}
