import { Alert, Anchor, Badge, Button, Group, Progress, Stack, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import { api, must } from '../api.ts';
import { useCan, useMe } from '../auth.tsx';
import { ApprovalSettings } from '../components/ApprovalSettings.tsx';
import { LiveLogs } from '../components/LiveLogs.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { TaskItemList } from '../components/TaskItemList.tsx';
import { TaskSummary, type ItemsSummary } from '../components/TaskSummary.tsx';
import { FINISHED, STATUS_COLOR, useTask } from '../components/tasks.ts';
import { useI18n } from '../i18n.tsx';

export function TaskPage() {
  const { t } = useI18n();
  const { id } = useParams();
  const task = useTask(id);
  const me = useMe().data;
  const can = useCan();
  const [comment, setComment] = useState('');
  const { cancel, decide } = useTaskActions(id, comment);
  const data = task.data;
  if (!data) return <ProblemAlert error={task.error} />;
  const mine = data.user_id === me?.id;
  return (
    <Stack>
      <TaskHeader
        task={data}
        cancellable={!FINISHED.includes(data.status) && (mine || can('tasks:WRITE'))}
        onCancel={() => cancel.mutate()}
        cancelling={cancel.isPending}
      />
      <Text>{data.summary}</Text>
      {data.details && (
        <Text size="sm" c="dimmed">
          {data.details}
        </Text>
      )}
      {data.progress && <Progress value={(100 * data.progress.done) / Math.max(data.progress.total, 1)} aria-label={t.progress} />}
      {data.progress?.message && <Text size="sm">{data.progress.message}</Text>}
      {data.error && (
        <Alert color="red" title={data.error.type ?? t.error}>
          {data.error.message}
        </Alert>
      )}
      <ProblemAlert error={cancel.error ?? decide.error} />
      <Approval task={data} mine={mine} comment={comment} setComment={setComment} decide={(d) => decide.mutate(d)} />
      {data.items_summary && id && <TaskItems taskId={id} type={data.type} status={data.status} summary={data.items_summary} />}
      {id && <LiveLogs taskId={id} />}
    </Stack>
  );
}

type Task = NonNullable<ReturnType<typeof useTask>['data']>;

/** Cancelling the task and deciding its approval; either reads the task again when it lands. */
function useTaskActions(id: string | undefined, comment: string) {
  const qc = useQueryClient();
  const refresh = () => qc.invalidateQueries({ queryKey: ['task', id] });
  const cancel = useMutation({
    mutationFn: () => must(api.POST('/api/tasks/{task_id}/cancel', { params: { path: { task_id: id! } } })),
    onSuccess: refresh,
  });
  const decide = useMutation({
    mutationFn: (d: 'approve' | 'reject') =>
      must(
        api.POST(d === 'approve' ? '/api/tasks/{task_id}/approve' : '/api/tasks/{task_id}/reject', {
          params: { path: { task_id: id! } },
          body: comment ? { comment } : {},
        }),
      ),
    onSuccess: refresh,
  });
  return { cancel, decide };
}

/** The task's kind and status, its workflow in Temporal's UI, and the cancel button while it may be cancelled. */
function TaskHeader(props: { task: Task; cancellable: boolean; onCancel: () => void; cancelling: boolean }) {
  const { t } = useI18n();
  const { task: data, cancellable, onCancel, cancelling } = props;
  return (
    <Group justify="space-between">
      <Title order={2}>
        {data.type}{' '}
        <Badge color={STATUS_COLOR[data.status]} data-testid="task-status">
          {data.status}
        </Badge>
      </Title>
      <Group>
        {data.temporal.ui_url && (
          <Anchor href={data.temporal.ui_url} target="_blank" rel="noreferrer">
            {t.temporal}
          </Anchor>
        )}
        {cancellable && (
          <Button color="red" variant="light" onClick={onCancel} loading={cancelling}>
            {t.cancel}
          </Button>
        )}
      </Group>
    </Group>
  );
}

/** The approval gate of a task writing into a protected environment: what is approved, the decision, or the buttons to decide. */
function Approval({ task: data, mine, comment, setComment, decide }: ApprovalProps) {
  const { t } = useI18n();
  const can = useCan();
  return (
    <>
      {data.status === 'AWAITING_APPROVAL' && !mine && can('tasks:APPROVE') && (
        <Group align="end">
          <Textarea label={t.comment} value={comment} onChange={(e) => setComment(e.currentTarget.value)} w={360} />
          <Button color="green" onClick={() => decide('approve')}>
            {t.approve}
          </Button>
          <Button color="red" variant="light" onClick={() => decide('reject')}>
            {t.reject}
          </Button>
        </Group>
      )}
      {data.status === 'AWAITING_APPROVAL' && mine && <Text c="dimmed">{t.waitingForOther}</Text>}
      {data.approval?.settings && <ApprovalSettings settings={data.approval.settings} />}
      {data.approval?.decision && (
        <Text size="sm" data-testid="approval-decision">
          {data.approval.decision === 'approve' ? t.approvedBy : data.approval.decision === 'reject' ? t.rejectedBy : t.approvalTimedOut}{' '}
          {data.approval.by ?? ''}
          {data.approval.comment ? `: ${data.approval.comment}` : ''}
        </Text>
      )}
    </>
  );
}

interface ApprovalProps {
  task: Task;
  mine: boolean;
  comment: string;
  setComment(c: string): void;
  decide(d: 'approve' | 'reject'): void;
}

/** A task's items: the summary first, then the items as a filterable list read page by page, each opened on demand. */
function TaskItems({ taskId, type, status, summary }: { taskId: string; type: string; status: string; summary: ItemsSummary }) {
  const { t } = useI18n();
  return (
    <>
      <TaskSummary summary={summary} />
      <Title order={3}>{t.items}</Title>
      <TaskItemList taskId={taskId} type={type} total={summary.total} status={status} />
    </>
  );
}
