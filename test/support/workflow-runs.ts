import type { Client } from '@temporalio/client';
import proto, { type temporal as TemporalProto } from '@temporalio/proto';

const { temporal } = proto;

export interface WorkflowRun {
  runId: string;
  events: number;
  /** The run's history as Temporal stores and sends it: the encoded size of its History proto. */
  bytes: number;
  /** How the run ended: WORKFLOW_EXECUTION_CONTINUED_AS_NEW, ..._COMPLETED, ... */
  closedBy: string;
  /** The activity types the run scheduled, in order. */
  activities: string[];
  /** Activities Temporal ran more than once (the started event of a retried one carries its attempt and the last failure). */
  retried: Array<{ activity: string; attempt: number; lastFailure: string }>;
}

/**
 * Every run of one workflow id (a task that continued as new), oldest first, with the size of each
 * run's history. Walks back from the latest run: each run's start event names the run it continues.
 */
export async function workflowRuns(client: Client, workflowId: string): Promise<WorkflowRun[]> {
  const runs: WorkflowRun[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history: TemporalProto.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: TemporalProto.api.history.v1.IHistoryEvent[] = history.events ?? [];
    const last = events.at(-1)?.eventType;
    runs.unshift({
      runId,
      events: events.length,
      bytes: temporal.api.history.v1.History.encode(history).finish().length,
      closedBy:
        last === undefined || last === null ? 'none' : (temporal.api.enums.v1.EventType[last] ?? String(last)).replace(/^EVENT_TYPE_/, ''),
      activities: events.flatMap((e) => {
        const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
        return name ? [name] : [];
      }),
      retried: retriedActivities(events),
    });
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}

/** The activities of one run's history that started more than once, with why the attempt before failed. */
function retriedActivities(events: TemporalProto.api.history.v1.IHistoryEvent[]): WorkflowRun['retried'] {
  const scheduled = new Map<string, string>();
  for (const e of events) {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) scheduled.set(String(e.eventId), name);
  }
  return events.flatMap((e) => {
    const started = e.activityTaskStartedEventAttributes;
    if (!started || (started.attempt ?? 1) <= 1) return [];
    return [
      {
        activity: scheduled.get(String(started.scheduledEventId)) ?? 'unknown',
        attempt: started.attempt ?? 1,
        lastFailure: started.lastFailure?.message ?? '',
      },
    ];
  });
}
