import { Badge, Box, Button, Code, Group, Paper, ScrollArea, SimpleGrid, Stack, Table, Tabs, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, must } from '../api.ts';
import { useCan } from '../auth.tsx';
import { EnvSelect } from '../components/EnvSelect.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { useI18n } from '../i18n.tsx';
import { MergeView } from './GitMerge.tsx';
import { ReviewPanel } from './GitReview.tsx';

const STATUS_COLOR: Record<string, string> = {
  CLEAN: 'green',
  DIRTY: 'orange',
  AHEAD: 'blue',
  BEHIND: 'yellow',
  DIVERGED: 'red',
  MERGING: 'grape',
  ERROR: 'red',
  NO_REPO: 'gray',
};

/** Many dashboards' repositories at a glance; one selected: diff, history, commit/pull/push, merge, deploy. */
export function GitPage() {
  const { t } = useI18n();
  const [params, setParams] = useSearchParams();
  const env = params.get('env');
  const selected = params.get('dashboard') ? Number(params.get('dashboard')) : null;
  const set = (k: string, v: string | null) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setParams(next);
  };
  const { dashboards, status } = useRepositories(env);
  return (
    <Stack>
      <Title order={2}>{t.git}</Title>
      <EnvSelect label={t.environment} value={env} onChange={(v) => set('env', v)} />
      <ProblemAlert error={dashboards.error ?? status.error} />
      <SimpleGrid cols={{ base: 1, lg: selected ? 2 : 1 }}>
        <RepositoryTable
          dashboards={dashboards.data?.items}
          status={status.data?.items}
          selected={selected}
          onSelect={(d) => set('dashboard', String(d))}
        />
        {env && selected !== null && <Repository env={env} id={selected} />}
      </SimpleGrid>
    </Stack>
  );
}

/** The environment's dashboards and their repositories' statuses, read in one batch. */
function useRepositories(env: string | null) {
  const dashboards = useQuery({
    queryKey: ['dashboards-git', env],
    enabled: !!env,
    queryFn: () => must(api.GET('/api/dashboards', { params: { query: { env_id: env!, page_size: 100, page_context: 'other' } } })),
  });
  const ids = dashboards.data?.items.map((d) => d.id) ?? [];
  const status = useQuery({
    queryKey: ['git-batch', env, ids.join(',')],
    enabled: !!env && ids.length > 0,
    queryFn: () => must(api.POST('/api/git/status/batch', { body: { env_id: env!, dashboard_ids: ids } })),
  });
  return { dashboards, status };
}

type Repositories = ReturnType<typeof useRepositories>;

/** The table of dashboards with their repository status and HEAD; a click selects one. */
function RepositoryTable({
  dashboards,
  status,
  selected,
  onSelect,
}: {
  dashboards: NonNullable<Repositories['dashboards']['data']>['items'] | undefined;
  status: NonNullable<Repositories['status']['data']>['items'] | undefined;
  selected: number | null;
  onSelect: (id: number) => void;
}) {
  const { t } = useI18n();
  return (
    <Table.ScrollContainer minWidth={400}>
      <Table striped highlightOnHover aria-label={t.repositories}>
        <Table.Tbody>
          {dashboards?.map((d) => {
            const s = status?.[String(d.id)];
            return (
              <Table.Tr
                key={d.id}
                onClick={() => onSelect(d.id)}
                style={{ cursor: 'pointer' }}
                bg={selected === d.id ? 'blue.0' : undefined}
              >
                <Table.Td>
                  <Button variant="subtle" size="compact-sm" onClick={() => onSelect(d.id)}>
                    {d.title}
                  </Button>
                </Table.Td>
                <Table.Td>
                  <Badge color={STATUS_COLOR[s?.status ?? 'NO_REPO']} data-testid={`git-status-${d.id}`}>
                    {s?.status ?? '…'}
                  </Badge>
                </Table.Td>
                <Table.Td>{s?.head?.slice(0, 8)}</Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

type GitOp =
  | { o: 'init' }
  | { o: 'sync' }
  | { o: 'pull' }
  | { o: 'push' }
  | { o: 'commit'; message: string }
  | { o: 'deploy'; commit: string; target: string | null };

/** The repository's operations, one mutation so the last one's error and answer show in one place. */
function useGitOp(env: string, id: number, onSuccess: () => Promise<unknown>) {
  const path = { dashboard_id: id };
  return useMutation({
    mutationFn: async (op: GitOp) => {
      const body = { env_id: env };
      if (op.o === 'init') return must(api.POST('/api/git/dashboards/{dashboard_id}/init', { params: { path }, body }));
      if (op.o === 'sync') return must(api.POST('/api/git/dashboards/{dashboard_id}/sync', { params: { path }, body }));
      if (op.o === 'commit')
        return must(api.POST('/api/git/dashboards/{dashboard_id}/commit', { params: { path }, body: { ...body, message: op.message } }));
      if (op.o === 'pull') return must(api.POST('/api/git/dashboards/{dashboard_id}/pull', { params: { path }, body }));
      if (op.o === 'push') return must(api.POST('/api/git/dashboards/{dashboard_id}/push', { params: { path }, body }));
      return must(
        api.POST('/api/git/dashboards/{dashboard_id}/deploy', {
          params: { path },
          body: { ...body, commit: op.commit, ...(op.target ? { target_env_id: op.target } : {}) },
        }),
      );
    },
    onSuccess,
  });
}

/** One dashboard's repository: status, operations, pull result, merge, and the diff/history/deploy/review tabs. */
function Repository({ env, id }: { env: string; id: number }) {
  const { t } = useI18n();
  const qc = useQueryClient();
  const path = { dashboard_id: id };
  const status = useQuery({
    queryKey: ['git-status', env, id],
    queryFn: () => must(api.GET('/api/git/dashboards/{dashboard_id}/status', { params: { path, query: { env_id: env } } })),
  });
  const refresh = () => qc.invalidateQueries({ predicate: (q) => String(q.queryKey[0]).startsWith('git-') });
  const op = useGitOp(env, id, refresh);
  const s = status.data;
  const deployed = op.variables?.o === 'deploy' ? (op.data as { task_id?: string } | undefined) : undefined;
  return (
    <Paper withBorder p="sm">
      <Stack>
        <Group>
          <Badge color={STATUS_COLOR[s?.status ?? 'NO_REPO']} size="lg" data-testid="repo-status">
            {s?.status ?? '…'}
          </Badge>
          {s && <Text size="sm">{t.aheadBehind(s.branch, s.ahead, s.behind)}</Text>}
        </Group>
        <ProblemAlert error={status.error ?? op.error} />
        <GitActions noRepo={s?.status === 'NO_REPO'} onOp={op.mutate} />
        {op.variables?.o === 'pull' && op.data && (
          <Text size="sm" data-testid="pull-result">
            {t.pullResult((op.data as { status: string }).status)}
          </Text>
        )}
        {s?.has_unfinished_merge && <MergeView env={env} id={id} onDone={refresh} />}
        <RepositoryTabs env={env} id={id} onOp={op.mutate} taskId={deployed?.task_id} />
      </Stack>
    </Paper>
  );
}

/** The init (when there is no repository), sync, pull and push buttons, for those who may write. */
function GitActions({ noRepo, onOp }: { noRepo: boolean; onOp: (op: GitOp) => void }) {
  const { t } = useI18n();
  const can = useCan();
  if (!can('git:WRITE')) return null;
  return (
    <Group gap="xs">
      {noRepo && (
        <Button size="xs" onClick={() => onOp({ o: 'init' })}>
          {t.gitInit}
        </Button>
      )}
      <Button size="xs" variant="light" onClick={() => onOp({ o: 'sync' })}>
        {t.gitSync}
      </Button>
      <Button size="xs" variant="light" onClick={() => onOp({ o: 'pull' })}>
        {t.pull}
      </Button>
      <Button size="xs" variant="light" onClick={() => onOp({ o: 'push' })}>
        {t.push}
      </Button>
    </Group>
  );
}

/** The diff, history, deploy and review tabs of one repository. */
function RepositoryTabs({ env, id, onOp, taskId }: { env: string; id: number; onOp: (op: GitOp) => void; taskId: string | undefined }) {
  const { t } = useI18n();
  return (
    <Tabs defaultValue="diff">
      <Tabs.List>
        <Tabs.Tab value="diff">{t.diff}</Tabs.Tab>
        <Tabs.Tab value="history">{t.history}</Tabs.Tab>
        <Tabs.Tab value="deploy">{t.deployTab}</Tabs.Tab>
        <Tabs.Tab value="review">{t.reviewTab}</Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="diff" pt="xs">
        <DiffPanel env={env} id={id} onCommit={(message) => onOp({ o: 'commit', message })} />
      </Tabs.Panel>
      <Tabs.Panel value="history" pt="xs">
        <HistoryPanel env={env} id={id} />
      </Tabs.Panel>
      <Tabs.Panel value="review" pt="xs">
        <ReviewPanel env={env} id={id} />
      </Tabs.Panel>
      <Tabs.Panel value="deploy" pt="xs">
        <DeployPanel onDeploy={(commit, target) => onOp({ o: 'deploy', commit, target })} taskId={taskId} />
      </Tabs.Panel>
    </Tabs>
  );
}

/** The working tree's changes against HEAD, and a commit of them. */
function DiffPanel({ env, id, onCommit }: { env: string; id: number; onCommit: (message: string) => void }) {
  const { t } = useI18n();
  const can = useCan();
  const [message, setMessage] = useState('');
  const diff = useQuery({
    queryKey: ['git-diff', env, id],
    queryFn: () =>
      must(api.GET('/api/git/dashboards/{dashboard_id}/diff', { params: { path: { dashboard_id: id }, query: { env_id: env } } })),
  });
  return (
    <>
      {diff.data?.files.length === 0 && <Text c="dimmed">—</Text>}
      {diff.data?.files.map((f) => (
        <Box key={f.path} mb="sm">
          <Text size="sm" fw={600} component="div">
            {f.path} <Badge size="xs">{f.change}</Badge>
          </Text>
          <Patch patch={f.patch} />
        </Box>
      ))}
      {can('git:WRITE') && (
        <Group align="end">
          <TextInput label={t.commitMessage} value={message} onChange={(e) => setMessage(e.currentTarget.value)} w={300} />
          <Button disabled={!message} onClick={() => onCommit(message)}>
            {t.commit}
          </Button>
        </Group>
      )}
    </>
  );
}

/** The last commits of the repository. */
function HistoryPanel({ env, id }: { env: string; id: number }) {
  const { t } = useI18n();
  const history = useQuery({
    queryKey: ['git-history', env, id],
    queryFn: () =>
      must(
        api.GET('/api/git/dashboards/{dashboard_id}/history', {
          params: { path: { dashboard_id: id }, query: { env_id: env, limit: 20 } },
        }),
      ),
  });
  return (
    <Table>
      <Table.Tbody>
        {history.data?.items.map((c, n) => (
          <Table.Tr key={`${n}-${c.commit}`}>
            <Table.Td>
              <Code>{c.commit.slice(0, 8)}</Code>
            </Table.Td>
            <Table.Td>{c.message}</Table.Td>
            <Table.Td>{c.author.name}</Table.Td>
            <Table.Td>{t.dateTime(c.committed_at)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** A deploy of one commit, into this environment or another; the started task is linked. */
function DeployPanel({ onDeploy, taskId }: { onDeploy: (commit: string, target: string | null) => void; taskId: string | undefined }) {
  const { t } = useI18n();
  const can = useCan();
  const [commit, setCommit] = useState('');
  const [target, setTarget] = useState<string | null>(null);
  return (
    <>
      <Group align="end">
        <TextInput label={t.commitToDeploy} value={commit} onChange={(e) => setCommit(e.currentTarget.value)} />
        <EnvSelect label={t.target} value={target} onChange={setTarget} />
        <Button disabled={!can('git:WRITE') || commit.length < 4} onClick={() => onDeploy(commit, target)}>
          {t.deploy}
        </Button>
      </Group>
      {taskId && <Link to={`/tasks/${taskId}`}>{taskId}</Link>}
    </>
  );
}

/** A unified diff with added and removed lines coloured. */
function Patch({ patch }: { patch: string }) {
  return (
    <ScrollArea.Autosize mah={300}>
      <Code block>
        {patch.split('\n').map((l, n) => (
          <Text
            key={n}
            size="xs"
            ff="monospace"
            c={l.startsWith('+') ? 'green.8' : l.startsWith('-') ? 'red.8' : l.startsWith('@@') ? 'blue.7' : undefined}
            style={{ whiteSpace: 'pre' }}
          >
            {l || ' '}
          </Text>
        ))}
      </Code>
    </ScrollArea.Autosize>
  );
}
