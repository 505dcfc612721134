/**
 * The assistant's operations, one entry per key of lib/assistant/operations.ts (the compiler
 * holds the two to the same keys): what each is, who may run it, and how it is planned. The
 * dispatcher (api/assistant/dispatch.ts) reads nothing else.
 */
import type { Intent } from '../../../lib/assistant/intent.ts';
import { operationKey, type OperationKey } from '../../../lib/assistant/operations.ts';
import { dashboardsBackup, dashboardsMigrate } from './dashboards.ts';
import { reviewAnswer, reviewApproveMappings, reviewSetField, reviewShow } from './dataset-review.ts';
import { datasetsGenerateDocs } from './datasets.ts';
import { gitCommit, gitDeploy, gitOpenPullRequest, gitStatus } from './git.ts';
import { help } from './help.ts';
import { datasetsImpact } from './impact.ts';
import { dashboardsList, dashboardsSearch, datasetsList, datasetsSearch } from './lists.ts';
import { taskLogs, taskStatus } from './tasks.ts';
import { dashboardsValidate } from './validate.ts';
import type { Operation } from './types.ts';

export const OPERATION_TABLE: { readonly [K in OperationKey]: Operation<K> } = {
  'help.capabilities': help,
  'dashboards.list': dashboardsList,
  'dashboards.search': dashboardsSearch,
  'datasets.list': datasetsList,
  'datasets.search': datasetsSearch,
  'tasks.status': taskStatus,
  'tasks.logs': taskLogs,
  'git.status': gitStatus,
  'dashboards.migrate': dashboardsMigrate,
  'dashboards.backup': dashboardsBackup,
  'dashboards.validate': dashboardsValidate,
  'datasets.generate_docs': datasetsGenerateDocs,
  'datasets.impact': datasetsImpact,
  'git.commit': gitCommit,
  'git.deploy': gitDeploy,
  'git.open_pr': gitOpenPullRequest,
  'dataset_review.show': reviewShow,
  'dataset_review.set_field': reviewSetField,
  'dataset_review.approve_mappings': reviewApproveMappings,
  'dataset_review.answer': reviewAnswer,
};

/** The operation an intent names; undefined for `unknown` (and `unsupported`, refused before this). */
export function operationFor(intent: Pick<Intent, 'domain' | 'operation'>): Operation | undefined {
  const key = operationKey(intent.domain, intent.operation);
  return key ? (OPERATION_TABLE[key] as Operation) : undefined;
}
