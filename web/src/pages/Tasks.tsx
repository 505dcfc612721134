import { Anchor, Badge, Group, Pagination, Progress, Select, Stack, Table, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, must } from '../api.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { STATUS_COLOR } from '../components/tasks.ts';
import { useI18n } from '../i18n.tsx';
import { TASK_TYPES } from '../../../contracts/task-kinds.ts';
import { TASK_STATUSES } from '../../../contracts/tasks.ts';

// The filters offer what the task-kind registry and the task statuses know (contracts/), never a list of their own.
const TYPES = TASK_TYPES;
const STATUSES = TASK_STATUSES;

export function TasksPage() {
  const { t } = useI18n();
  const [params, setParams] = useSearchParams();
  const type = params.get('type') as (typeof TYPES)[number] | null;
  const status = params.get('status') as (typeof STATUSES)[number] | null;
  const page = Number(params.get('page') ?? 1);
  const set = (k: string, v: string | null) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    if (k !== 'page') next.delete('page');
    setParams(next);
  };
  const list = useTaskList(type, status, page);
  return (
    <Stack>
      <Title order={2}>{t.tasks}</Title>
      <Group>
        <Select label={t.type} data={[...TYPES]} value={type} onChange={(v) => set('type', v)} clearable />
        <Select label={t.status} data={[...STATUSES]} value={status} onChange={(v) => set('status', v)} clearable />
      </Group>
      <ProblemAlert error={list.error} />
      <Table.ScrollContainer minWidth={700}>
        <Table striped aria-label={t.tasks}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t.type}</Table.Th>
              <Table.Th>{t.status}</Table.Th>
              <Table.Th>{t.summary}</Table.Th>
              <Table.Th>{t.owner}</Table.Th>
              <Table.Th>{t.created}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.items.map((task) => (
              <TaskRow key={task.id} task={task} />
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {list.data && list.data.total > 25 && (
        <Pagination total={Math.ceil(list.data.total / 25)} value={page} onChange={(p) => set('page', String(p))} />
      )}
    </Stack>
  );
}

/** A page of tasks under the filters, read again every 3 s (the page stays while the next one loads). */
function useTaskList(type: (typeof TYPES)[number] | null, status: (typeof STATUSES)[number] | null, page: number) {
  return useQuery({
    queryKey: ['tasks', type, status, page],
    placeholderData: keepPreviousData,
    refetchInterval: 3000,
    queryFn: () =>
      must(
        api.GET('/api/tasks', {
          params: { query: { page, page_size: 25, ...(type ? { task_type: type } : {}), ...(status ? { status } : {}) } },
        }),
      ),
  });
}

type TaskItem = NonNullable<ReturnType<typeof useTaskList>['data']>['items'][number];

/** One task: its kind (linking to its page), status with progress while it runs, summary, owner, creation time. */
function TaskRow({ task }: { task: TaskItem }) {
  const { t } = useI18n();
  return (
    <Table.Tr>
      <Table.Td>
        <Anchor component={Link} to={`/tasks/${task.id}`}>
          {task.type}
        </Anchor>
      </Table.Td>
      <Table.Td>
        <Badge color={STATUS_COLOR[task.status]}>{task.status}</Badge>
        {task.progress && task.status === 'RUNNING' && (
          <Progress value={(100 * task.progress.done) / Math.max(task.progress.total, 1)} size="xs" mt={4} />
        )}
      </Table.Td>
      <Table.Td>{task.summary}</Table.Td>
      <Table.Td>{task.owner_username}</Table.Td>
      <Table.Td>{t.dateTime(task.created_at)}</Table.Td>
    </Table.Tr>
  );
}
