import { Badge, Button, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api, must } from '../api.ts';
import { useCan } from '../auth.tsx';
import { EnvSelect } from '../components/EnvSelect.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { useI18n } from '../i18n.tsx';

const PREVIEW_COLOR: Record<string, string> = { pending: 'yellow', success: 'green', failure: 'red' };

/** A dashboard repository's branches and the pull requests Switchyard opened, with their preview; a form to open one. */
export function ReviewPanel({ env, id }: { env: string; id: number }) {
  const { t } = useI18n();
  const can = useCan();
  const qc = useQueryClient();
  const path = { dashboard_id: id };
  const branches = useQuery({
    queryKey: ['git-branches', env, id],
    queryFn: () => must(api.GET('/api/git/dashboards/{dashboard_id}/branches', { params: { path, query: { env_id: env } } })),
  });
  const prs = useQuery({ queryKey: ['git-prs', env, id], queryFn: () => listPullRequests(env, id) });
  const [branch, setBranch] = useState('');
  const [title, setTitle] = useState('');
  const [target, setTarget] = useState<string | null>(null);
  const open = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/git/dashboards/{dashboard_id}/pull-requests', {
          params: { path },
          body: { env_id: env, branch, title, target_env_id: target ?? env, verification: 'queries' },
        }),
      ),
    onSuccess: () => qc.invalidateQueries({ predicate: (q) => String(q.queryKey[0]).startsWith('git-') }),
  });
  return (
    <Stack>
      <ProblemAlert error={branches.error ?? prs.error ?? open.error} />
      <Title order={6}>{t.branches}</Title>
      <Group gap="xs">
        {branches.data?.items.map((b) => (
          <Badge key={b.name} variant={b.current ? 'filled' : 'light'} data-testid="branch">
            {b.name}
            {b.pull_request ? ` · #${b.pull_request.number}` : ''}
          </Badge>
        ))}
      </Group>
      <Title order={6}>{t.pullRequests}</Title>
      <PullRequestTable items={prs.data?.items ?? []} />
      {can('pull_requests:OPEN') && (
        <Group align="end">
          <TextInput label={t.branch} value={branch} onChange={(e) => setBranch(e.currentTarget.value)} />
          <TextInput label={t.prTitle} value={title} onChange={(e) => setTitle(e.currentTarget.value)} />
          <EnvSelect label={t.target} value={target} onChange={setTarget} />
          <Button disabled={!branch || !title || open.isPending} onClick={() => open.mutate()}>
            {t.openPullRequest}
          </Button>
        </Group>
      )}
    </Stack>
  );
}

type PullRequestRow = NonNullable<Awaited<ReturnType<typeof listPullRequests>>>['items'][number];
const listPullRequests = (env: string, id: number) =>
  must(api.GET('/api/git/dashboards/{dashboard_id}/pull-requests', { params: { path: { dashboard_id: id }, query: { env_id: env } } }));

/** The pull requests, each with its preview's status and tasks. */
function PullRequestTable({ items }: { items: PullRequestRow[] }) {
  const { t } = useI18n();
  return (
    <Table>
      <Table.Tbody>
        {items.map((p) => (
          <Table.Tr key={p.id}>
            <Table.Td>
              <a href={p.url} target="_blank" rel="noreferrer">
                #{p.number} {p.title}
              </a>
            </Table.Td>
            <Table.Td>
              {p.head_branch} → {p.base_branch}
            </Table.Td>
            <Table.Td>
              <Badge color={PREVIEW_COLOR[p.preview_state ?? ''] ?? 'gray'}>{p.preview_state ?? '…'}</Badge>
            </Table.Td>
            <Table.Td>{p.preview_task_id && <Link to={`/tasks/${p.preview_task_id}`}>{t.preview}</Link>}</Table.Td>
            <Table.Td>
              <Text size="sm">{p.state}</Text>
              {p.deploy_task_id && <Link to={`/tasks/${p.deploy_task_id}`}>{t.deploy}</Link>}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
