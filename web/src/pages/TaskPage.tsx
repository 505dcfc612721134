import { Alert, Anchor, Badge, Button, Code, Group, Progress, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import type { MigrationResult } from '../../../contracts/migration.ts';
import type { ItemsResult, NextAction } from '../../../contracts/outcomes.ts';
import { api, authFetch, must } from '../api.ts';
import { useCan, useMe } from '../auth.tsx';
import { BrowserScreenshots } from '../components/BrowserScreenshots.tsx';
import { ChartVerdicts } from '../components/ChartVerdicts.tsx';
import { EmbeddedUuids } from '../components/EmbeddedUuids.tsx';
import { LiveLogs } from '../components/LiveLogs.tsx';
import { ObjectDiff } from '../components/ObjectDiff.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { FINISHED, STATUS_COLOR, useTask } from '../components/tasks.ts';
import { useI18n } from '../i18n.tsx';

export function TaskPage() {
  const { t } = useI18n();
  const { id } = useParams();
  const task = useTask(id);
  const me = useMe().data;
  const can = useCan();
  const qc = useQueryClient();
  const [comment, setComment] = useState('');
  const refresh = () => qc.invalidateQueries({ queryKey: ['task', id] });
  const cancel = useMutation({ mutationFn: () => must(api.POST('/api/tasks/{task_id}/cancel', { params: { path: { task_id: id! } } })), onSuccess: refresh });
  const decide = useMutation({
    mutationFn: (d: 'approve' | 'reject') =>
      must(api.POST(d === 'approve' ? '/api/tasks/{task_id}/approve' : '/api/tasks/{task_id}/reject', { params: { path: { task_id: id! } }, body: comment ? { comment } : {} })),
    onSuccess: refresh,
  });
  const data = task.data;
  if (!data) return <ProblemAlert error={task.error} />;
  const result = data.result as (ItemsResult & Partial<MigrationResult>) | null;
  const mine = data.user_id === me?.id;
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>
          {data.type} <Badge color={STATUS_COLOR[data.status]} data-testid="task-status">{data.status}</Badge>
        </Title>
        <Group>
          {data.temporal.ui_url && (
            <Anchor href={data.temporal.ui_url} target="_blank" rel="noreferrer">
              {t.temporal}
            </Anchor>
          )}
          {!FINISHED.includes(data.status) && (mine || can('tasks:WRITE')) && (
            <Button color="red" variant="light" onClick={() => cancel.mutate()} loading={cancel.isPending}>
              {t.cancel}
            </Button>
          )}
        </Group>
      </Group>
      <Text>{data.summary}</Text>
      {data.details && <Text size="sm" c="dimmed">{data.details}</Text>}
      {data.progress && <Progress value={(100 * data.progress.done) / Math.max(data.progress.total, 1)} aria-label={t.progress} />}
      {data.progress?.message && <Text size="sm">{data.progress.message}</Text>}
      {data.error && (
        <Alert color="red" title={data.error.type ?? t.error}>
          {data.error.message}
        </Alert>
      )}
      <ProblemAlert error={cancel.error ?? decide.error} />
      {data.status === 'AWAITING_APPROVAL' && !mine && can('tasks:APPROVE') && (
        <Group align="end">
          <Textarea label={t.comment} value={comment} onChange={(e) => setComment(e.currentTarget.value)} w={360} />
          <Button color="green" onClick={() => decide.mutate('approve')}>
            {t.approve}
          </Button>
          <Button color="red" variant="light" onClick={() => decide.mutate('reject')}>
            {t.reject}
          </Button>
        </Group>
      )}
      {data.status === 'AWAITING_APPROVAL' && mine && <Text c="dimmed">{t.waitingForOther}</Text>}
      {data.approval?.decision && (
        <Text size="sm" data-testid="approval-decision">
          {data.approval.decision === 'approve' ? t.approvedBy : data.approval.decision === 'reject' ? t.rejectedBy : t.approvalTimedOut} {data.approval.by ?? ''}
          {data.approval.comment ? `: ${data.approval.comment}` : ''}
        </Text>
      )}
      {id && <LiveLogs taskId={id} />}
      {result?.items && id && <TaskItems taskId={id} type={data.type} result={result} />}
    </Stack>
  );
}

/** A finished task's items: a migration's as object diffs with each chart's verdict, others as a table; browser screenshots and next actions. */
function TaskItems({ taskId, type, result }: { taskId: string; type: string; result: ItemsResult & Partial<MigrationResult> }) {
  const { t } = useI18n();
  return (
    <>
      <Title order={3}>{t.items}</Title>
      {type === 'migration' ? (
        (result as MigrationResult).items.map((o) => (
          <div key={String(o.id)}>
            <ObjectDiff outcome={o} />
            <ChartVerdicts verification={o.verification} />
            <EmbeddedUuids companions={o.companions} />
          </div>
        ))
      ) : (
        <Table>
          <Table.Tbody>
            {result.items.map((i, n) => (
              <Table.Tr key={n}>
                <Table.Td>{i.kind}</Table.Td>
                <Table.Td>{i.title ?? i.id}</Table.Td>
                <Table.Td>
                  <Badge>{i.status}</Badge>
                </Table.Td>
                <Table.Td>{i.error}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {result.items.some((i) => i.upstream_error) && (
        <Code block>{JSON.stringify(result.items.flatMap((i) => (i.upstream_error ? [{ id: i.id, step: i.step, upstream: i.upstream_error }] : [])), null, 2)}</Code>
      )}
      <BrowserScreenshots taskId={taskId} items={result.items} />
      <NextActions actions={[...result.next_actions, ...result.items.flatMap((i) => i.next_actions)]} />
    </>
  );
}

/** A task's next actions; those with an exact request become buttons that send it. */
function NextActions({ actions }: { actions: NextAction[] }) {
  const { t } = useI18n();
  const [answer, setAnswer] = useState<string>();
  if (!actions.length) return null;
  return (
    <Stack gap="xs">
      <Title order={4}>{t.nextActions}</Title>
      {actions.map((a, n) => (
        <Group key={n}>
          {a.request ? (
            <Button
              size="xs"
              variant="light"
              onClick={async () => {
                const res = await authFetch(a.request!.path, { method: a.request!.method, headers: { 'content-type': 'application/json' }, body: a.request!.body === undefined ? undefined : JSON.stringify(a.request!.body) });
                setAnswer(`${res.status} ${await res.text()}`);
              }}
            >
              {a.action}
            </Button>
          ) : (
            <Badge variant="outline">{a.action}</Badge>
          )}
          <Text size="sm">{a.description}</Text>
        </Group>
      ))}
      {answer && <Code block>{answer}</Code>}
    </Stack>
  );
}
