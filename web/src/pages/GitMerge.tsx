import { Badge, Button, Code, Group, Paper, ScrollArea, SimpleGrid, Stack, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, must } from '../api.ts';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { useI18n } from '../i18n.tsx';

type Strategy = 'ours' | 'theirs' | 'content';

/** The three-way merge: per conflicted file, base / ours / theirs side by side, and ours, theirs or an edited version. */
export function MergeView({ env, id, onDone }: { env: string; id: number; onDone(): Promise<unknown> }) {
  const { t } = useI18n();
  const path = { dashboard_id: id };
  const merge = useMergeStatus(env, id);
  const [edits, setEdits] = useState<Record<string, string>>({});
  useEffect(() => {
    const initial: Record<string, string> = {};
    for (const c of merge.data?.conflicts ?? []) initial[c.path] = c.working ?? c.ours ?? '';
    setEdits(initial);
  }, [merge.data]);
  const resolve = useMutation({
    mutationFn: (r: { path: string; strategy: Strategy }) =>
      must(
        api.POST('/api/git/dashboards/{dashboard_id}/merge/resolve', {
          params: { path },
          body: {
            env_id: env,
            resolutions: [
              r.strategy === 'content'
                ? { path: r.path, strategy: 'content', content: edits[r.path] ?? '' }
                : { path: r.path, strategy: r.strategy },
            ],
          },
        }),
      ),
    onSuccess: () => merge.refetch(),
  });
  const finish = useMutation({
    mutationFn: async (o: 'continue' | 'abort'): Promise<{ status: string }> =>
      o === 'continue'
        ? must(api.POST('/api/git/dashboards/{dashboard_id}/merge/continue', { params: { path }, body: { env_id: env } }))
        : must(api.POST('/api/git/dashboards/{dashboard_id}/merge/abort', { params: { path }, body: { env_id: env } })),
    onSuccess: onDone,
  });
  const conflicts = merge.data?.conflicts ?? [];
  return (
    <Paper withBorder p="sm" bg="grape.0" data-testid="merge-view">
      <Title order={4}>{t.merge}</Title>
      <ProblemAlert error={merge.error ?? resolve.error ?? finish.error} />
      {conflicts.map((c) => (
        <ConflictEditor
          key={c.path}
          conflict={c}
          edit={edits[c.path] ?? ''}
          onEdit={(text) => setEdits({ ...edits, [c.path]: text })}
          onResolve={(strategy) => resolve.mutate({ path: c.path, strategy })}
        />
      ))}
      <Group mt="sm">
        <Button color="green" disabled={conflicts.some((c) => !c.resolved)} onClick={() => finish.mutate('continue')}>
          {t.continueMerge}
        </Button>
        <Button color="red" variant="light" onClick={() => finish.mutate('abort')}>
          {t.abort}
        </Button>
      </Group>
    </Paper>
  );
}

const useMergeStatus = (env: string, id: number) =>
  useQuery({
    queryKey: ['git-merge', env, id],
    queryFn: () =>
      must(api.GET('/api/git/dashboards/{dashboard_id}/merge/status', { params: { path: { dashboard_id: id }, query: { env_id: env } } })),
  });

type Conflict = NonNullable<ReturnType<typeof useMergeStatus>['data']>['conflicts'][number];

/** One conflicted file: its three sides, the edited version, and the three ways to resolve it. */
function ConflictEditor({
  conflict: c,
  edit,
  onEdit,
  onResolve,
}: {
  conflict: Conflict;
  edit: string;
  onEdit: (text: string) => void;
  onResolve: (strategy: Strategy) => void;
}) {
  const { t } = useI18n();
  return (
    <Stack gap="xs" mt="sm" data-testid="conflict">
      <Text fw={600} component="div">
        {c.path} {c.resolved ? <Badge color="green">{t.resolved}</Badge> : <Badge color="red">{t.conflict}</Badge>}
      </Text>
      <SimpleGrid cols={{ base: 1, md: 3 }} spacing="xs">
        {(['base', 'ours', 'theirs'] as const).map((side) => (
          <div key={side}>
            <Text size="xs" c="dimmed">
              {side === 'ours' ? t.ours : side === 'theirs' ? t.theirs : t.base}
            </Text>
            <ScrollArea.Autosize mah={220}>
              <Code block>{c[side] ?? '—'}</Code>
            </ScrollArea.Autosize>
          </div>
        ))}
      </SimpleGrid>
      <Textarea
        label={t.edit}
        aria-label={t.editFile(c.path)}
        value={edit}
        onChange={(e) => onEdit(e.currentTarget.value)}
        autosize
        minRows={3}
        maxRows={12}
        ff="monospace"
      />
      <Group gap="xs">
        <Button size="xs" onClick={() => onResolve('ours')}>
          {t.ours}
        </Button>
        <Button size="xs" onClick={() => onResolve('theirs')}>
          {t.theirs}
        </Button>
        <Button size="xs" variant="light" onClick={() => onResolve('content')}>
          {t.save}
        </Button>
      </Group>
    </Stack>
  );
}
