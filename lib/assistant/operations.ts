/**
 * The operations the assistant knows, as data: for each, what the text must give before it can
 * be planned and how risky it is. This is the one place that says whether an operation waits for
 * confirmation: the parser reports it (`risk_level`, `requires_confirmation`, `missing`) and the
 * API's dispatcher (api/assistant/operations/) asks to confirm exactly when it says so. How each
 * operation runs, and the permission it needs, are the API's (one module per domain there).
 */
import type { Domain, Entities, MissingParameter, Operation, RiskLevel } from './intent.ts';

export interface OperationSpec {
  /** What the text must give; anything missing is asked for, and the reply completes the command. */
  readonly required: readonly MissingParameter[];
  /** `safe` reads, `low` a task that changes nothing, `medium` writes outside Superset, `high` changes Superset. */
  readonly risk: RiskLevel | ((e: Entities) => RiskLevel);
}

export const OPERATIONS = {
  'help.capabilities': { required: [], risk: 'safe' },
  'dashboards.list': { required: ['environment'], risk: 'safe' },
  'dashboards.search': { required: ['environment', 'query'], risk: 'safe' },
  'datasets.list': { required: ['environment'], risk: 'safe' },
  'datasets.search': { required: ['environment', 'query'], risk: 'safe' },
  'tasks.status': { required: ['task_id'], risk: 'safe' },
  'tasks.logs': { required: ['task_id'], risk: 'safe' },
  'git.status': { required: ['environment', 'dashboards'], risk: 'safe' },
  // A dry run changes nothing: it runs at once, as the direct route would.
  'dashboards.migrate': { required: ['source_environment', 'target_environment', 'dashboards'], risk: (e) => (e.dry_run ? 'low' : 'high') },
  'dashboards.backup': { required: ['environment', 'dashboards'], risk: 'medium' },
  'datasets.generate_docs': { required: ['environment', 'datasets'], risk: 'medium' },
  // The content validator reads only: it starts at once, as a dry run does.
  'dashboards.validate': { required: ['environment'], risk: 'low' },
  // What uses a table or dataset (api/impact): a read.
  'datasets.impact': { required: ['environment', 'datasets'], risk: 'safe' },
  'git.commit': { required: ['environment', 'dashboards', 'message'], risk: 'medium' },
  'git.deploy': { required: ['environment', 'dashboards'], risk: 'high' },
  // A pull request writes to the git server, not Superset; its preview only reads.
  'git.open_pr': { required: ['environment', 'dashboards', 'target_environment'], risk: 'medium' },
  'dataset_review.show': { required: [], risk: 'safe' },
  // Dataset review writes change Switchyard's session, not Superset.
  'dataset_review.set_field': { required: ['field', 'label'], risk: 'medium' },
  'dataset_review.approve_mappings': { required: [], risk: 'medium' },
  'dataset_review.answer': { required: ['answer'], risk: 'medium' },
} as const satisfies Partial<Record<`${Domain}.${Operation}`, OperationSpec>>;

export type OperationKey = keyof typeof OPERATIONS;

export function operationKey(domain: Domain, operation: Operation): OperationKey | undefined {
  const key = `${domain}.${operation}`;
  return key in OPERATIONS ? (key as OperationKey) : undefined;
}

/** The operation's risk for these entities; `safe` for anything that is not an operation (unknown, unsupported). */
export function riskOf(key: OperationKey | undefined, e: Entities): RiskLevel {
  if (!key) return 'safe';
  const risk: OperationSpec['risk'] = OPERATIONS[key].risk;
  return typeof risk === 'function' ? risk(e) : risk;
}

/** Medium and high risks wait for the owner's confirmation; safe and low run at once. */
export const confirms = (risk: RiskLevel): boolean => risk === 'medium' || risk === 'high';

const ENTITY_OF: Record<MissingParameter, (e: Entities) => unknown> = {
  environment: (e) => e.environment,
  query: (e) => e.query,
  task_id: (e) => e.task_id || e.latest,
  source_environment: (e) => e.source_environment,
  target_environment: (e) => e.target_environment,
  dashboards: (e) => e.dashboards,
  datasets: (e) => e.datasets,
  message: (e) => e.message,
  field: (e) => e.field,
  label: (e) => e.label,
  answer: (e) => e.answer,
};

/** What the operation needs and the entities do not give. */
export function missingFor(key: OperationKey | undefined, e: Entities): MissingParameter[] {
  const required: readonly MissingParameter[] = key ? OPERATIONS[key].required : [];
  return required.filter((p) => {
    const v = ENTITY_OF[p](e);
    return !v || (Array.isArray(v) && v.length === 0);
  });
}
