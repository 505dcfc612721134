/**
 * Compile-time only: every workflow name the contracts give (each task kind's, and the workflows
 * started by name outside the registry) is a function workflows/index.ts exports, and a kind's
 * input is what its workflow takes. contracts/ imports nothing, so the check lives beside the
 * exports; the bundle never includes this module (index.ts does not import it).
 */
import type { ASSISTANT_CONFIRMATION_WORKFLOW } from '../contracts/assistant.ts';
import type { RELEASE_WORKFLOW } from '../contracts/clean-release.ts';
import type { GIT_COMPANIONS_WORKFLOW } from '../contracts/git.ts';
import type { SCHEDULED_RUN_WORKFLOW } from '../contracts/schedules.ts';
import type { TASK_KINDS, TaskInputOf, TaskKindName } from '../contracts/task-kinds.ts';
import type * as workflows from './index.ts';

type Exported = keyof typeof workflows;
type KindWorkflow = (typeof TASK_KINDS)[TaskKindName]['workflow'];
type NamedWorkflow =
  | KindWorkflow
  | typeof ASSISTANT_CONFIRMATION_WORKFLOW
  | typeof RELEASE_WORKFLOW
  | typeof GIT_COMPANIONS_WORKFLOW
  | typeof SCHEDULED_RUN_WORKFLOW;

type WorkflowInput<W> = W extends Exported ? Parameters<(typeof workflows)[W]>[0] : never;
/** The kinds whose input their workflow would not accept (never, when all agree). */
type InputMismatch = {
  [K in TaskKindName]: TaskInputOf<K> extends WorkflowInput<(typeof TASK_KINDS)[K]['workflow']> ? never : K;
}[TaskKindName];

type Unexported = Exclude<NamedWorkflow, Exported>;

// A failure here names the offender: the type becomes a sentence and `true` is not assignable to it.
export const everyNamedWorkflowIsExported: [Unexported] extends [never] ? true : `not exported by workflows/index.ts: ${Unexported}` = true;
export const everyKindInputFitsItsWorkflow: [InputMismatch] extends [never] ? true : `input not taken by its workflow: ${InputMismatch}` =
  true;
