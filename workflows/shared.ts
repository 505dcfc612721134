/**
 * Definitions shared by the workflow sandbox and the Node side (API, worker): search attribute
 * keys, message definitions and workflow inputs. Nothing here may touch I/O.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_TASK_TYPE = defineSearchAttributeKey('SwitchyardTaskType', SearchAttributeType.KEYWORD);
export const SA_TASK_OWNER = defineSearchAttributeKey('SwitchyardOwner', SearchAttributeType.KEYWORD);
export const SA_ENV_IDS = defineSearchAttributeKey('SwitchyardEnvIds', SearchAttributeType.KEYWORD_LIST);
export const SA_DASHBOARD_IDS = defineSearchAttributeKey('SwitchyardDashboardIds', SearchAttributeType.KEYWORD_LIST);

export const SEARCH_ATTRIBUTES = [SA_TASK_TYPE, SA_TASK_OWNER, SA_ENV_IDS, SA_DASHBOARD_IDS] as const;

/** Temporal's CLI spells the types in PascalCase. */
export function cliSearchAttributeFlags(): string[] {
  const names: Record<string, string> = { KEYWORD: 'Keyword', KEYWORD_LIST: 'KeywordList' };
  return SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=${names[k.type]}`]);
}

export interface SelfcheckInput {
  /** Seconds the sleep step lasts (heartbeating), so tests can kill a worker mid-task. */
  sleepSeconds: number;
  /** 'retryable': the fail step throws on its first `failAttempts` attempts, then passes. */
  fail: 'none' | 'retryable' | 'non_retryable';
  failAttempts: number;
}

export interface SelfcheckStepResult {
  step: string;
  ok: boolean;
  detail: string;
  attempt: number;
}
