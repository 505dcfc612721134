/** Search attributes every task workflow carries, so operators can find tasks in the Temporal console. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_TASK_TYPE = defineSearchAttributeKey('SwitchyardTaskType', SearchAttributeType.KEYWORD);
export const SA_TASK_OWNER = defineSearchAttributeKey('SwitchyardOwner', SearchAttributeType.KEYWORD);
export const SA_ENV_IDS = defineSearchAttributeKey('SwitchyardEnvIds', SearchAttributeType.KEYWORD_LIST);
export const SA_DASHBOARD_IDS = defineSearchAttributeKey('SwitchyardDashboardIds', SearchAttributeType.KEYWORD_LIST);

export const SEARCH_ATTRIBUTES = [SA_TASK_TYPE, SA_TASK_OWNER, SA_ENV_IDS, SA_DASHBOARD_IDS] as const;
