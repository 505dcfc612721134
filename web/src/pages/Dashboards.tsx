import {
  Anchor,
  Badge,
  Button,
  Card,
  Checkbox,
  Group,
  Modal,
  Pagination,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, must } from '../api.ts';
import { useCan } from '../auth.tsx';
import { EnvSelect } from '../components/EnvSelect.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { Thumbnail } from '../components/Thumbnail.tsx';
import { ValidateButton } from '../components/ValidateDashboard.tsx';
import { useI18n } from '../i18n.tsx';

const PAGE_SIZE = 24;

/** The dashboards of one environment, a page at a time (a 3,000-dashboard instance never loads whole). */
export function DashboardsPage() {
  const { t } = useI18n();
  const can = useCan();
  const [params, setParams] = useSearchParams();
  const env = params.get('env');
  const page = Number(params.get('page') ?? 1);
  const showAll = params.get('all') === '1';
  const [search, setSearch] = useState(params.get('q') ?? '');
  const [q] = useDebouncedValue(search, 300);
  const [selected, setSelected] = useState<number[]>([]);
  const [detail, setDetail] = useState<number | null>(null);
  const set = (patch: Record<string, string | null>) => setParams(patched(params, patch));
  const list = useDashboardList(env, page, q, showAll);
  const filter = list.data?.effective_profile_filter;
  return (
    <Stack>
      <Title order={2}>{t.dashboards}</Title>
      <Group align="end">
        <EnvSelect label={t.environment} value={env} onChange={(v) => set({ env: v, page: null })} />
        <TextInput
          label={t.search}
          value={search}
          onChange={(e) => {
            setSearch(e.currentTarget.value);
            if (params.get('page')) set({ page: null }); // a new search starts at its first page
          }}
          w={260}
        />
        <Switch
          label={filter?.applied ? t.showingMine : t.showingAll}
          checked={!filter?.applied}
          disabled={!filter || (!filter.applied && !showAll)}
          onChange={(e) => set({ all: e.currentTarget.checked ? '1' : null })}
          data-testid="profile-filter"
        />
        {selected.length > 0 && can('dashboards:MIGRATE') && (
          <Button component={Link} to={`/migrate?source=${env}&ids=${selected.join(',')}`}>
            {t.migrate} ({selected.length})
          </Button>
        )}
      </Group>
      {filter && <ProfileFilterNotes filter={filter} />}
      <ProblemAlert error={list.error} />
      {list.data && (
        <Text size="sm" c="dimmed">
          {t.dashboardCount(list.data.total)}
        </Text>
      )}
      <DashboardGrid envId={env!} items={list.data?.items ?? []} selected={selected} onSelected={setSelected} onOpen={setDetail} />
      {list.data && list.data.total > PAGE_SIZE && (
        <Pagination total={Math.ceil(list.data.total / PAGE_SIZE)} value={page} onChange={(p) => set({ page: String(p) })} />
      )}
      <Modal opened={detail !== null} onClose={() => setDetail(null)} size="lg" title={t.dashboards}>
        {detail !== null && env && <DashboardDetail envId={env} id={detail} />}
      </Modal>
    </Stack>
  );
}

type DashboardItem = NonNullable<ReturnType<typeof useDashboardList>['data']>['items'][number];
type ProfileFilter = NonNullable<NonNullable<ReturnType<typeof useDashboardList>['data']>['effective_profile_filter']>;

/** The URL's search parameters with `patch` applied: a null value removes its key. */
function patched(params: URLSearchParams, patch: Record<string, string | null>): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) next.delete(k);
    else next.set(k, v);
  }
  return next;
}

/** Why the profile filter is off (unless the person turned it off), and whom an ambiguous profile could be. */
function ProfileFilterNotes({ filter }: { filter: ProfileFilter }) {
  const { t } = useI18n();
  return (
    <>
      {!filter.applied && filter.reason !== 'override_show_all' && (
        <Text size="xs" c="dimmed">
          {t.profileFilter(filter.reason)}
        </Text>
      )}
      {filter.resolution?.status === 'ambiguous' && (
        <Text size="xs" c="orange" data-testid="profile-ambiguous">
          {t.profileAmbiguous(filter.resolution.candidates.map((c) => `${c.display_name}${c.email ? ` <${c.email}>` : ''}`).join(', '))}
        </Text>
      )}
    </>
  );
}

/** The page of dashboards the URL names (environment, page, search, profile filter override). */
function useDashboardList(env: string | null, page: number, q: string, showAll: boolean) {
  return useQuery({
    queryKey: ['dashboards', env, page, q, showAll],
    enabled: !!env,
    placeholderData: keepPreviousData,
    queryFn: () =>
      must(
        api.GET('/api/dashboards', {
          params: {
            query: {
              env_id: env!,
              page,
              page_size: PAGE_SIZE,
              ...(q ? { search: q } : {}),
              ...(showAll ? { override_show_all: true } : {}),
            },
          },
        }),
      ),
  });
}

function DashboardGrid({
  envId,
  items,
  selected,
  onSelected,
  onOpen,
}: {
  envId: string;
  items: DashboardItem[];
  selected: number[];
  onSelected: (ids: number[]) => void;
  onOpen: (id: number) => void;
}) {
  return (
    <SimpleGrid cols={{ base: 1, xs: 2, md: 3, lg: 4 }}>
      {items.map((d) => (
        <DashboardCard
          key={d.id}
          envId={envId}
          dashboard={d}
          selected={selected.includes(d.id)}
          onSelect={(on) => onSelected(on ? [...selected, d.id] : selected.filter((x) => x !== d.id))}
          onOpen={() => onOpen(d.id)}
        />
      ))}
    </SimpleGrid>
  );
}

/** One dashboard of the grid: its thumbnail, a checkbox to select it for a migration, its title opening the detail. */
function DashboardCard({
  envId,
  dashboard: d,
  selected,
  onSelect,
  onOpen,
}: {
  envId: string;
  dashboard: DashboardItem;
  selected: boolean;
  onSelect: (on: boolean) => void;
  onOpen: () => void;
}) {
  const { t } = useI18n();
  return (
    <Card withBorder padding="sm" data-testid="dashboard-card">
      <Card.Section>
        <Thumbnail envId={envId} dashboardId={d.id} title={d.title} />
      </Card.Section>
      <Group justify="space-between" mt="xs" wrap="nowrap">
        <Checkbox aria-label={t.selectDashboard(d.title)} checked={selected} onChange={(e) => onSelect(e.currentTarget.checked)} />
        <Anchor component="button" onClick={onOpen} fw={500} lineClamp={2} title={d.title} style={{ flex: 1, textAlign: 'left' }}>
          {d.title}
        </Anchor>
      </Group>
      <Text size="xs" c="dimmed" component="div">
        {d.published && (
          <Badge size="xs" mr={4}>
            {t.published}
          </Badge>
        )}
        {d.owners.map((o) => o.display_name).join(', ')} · {d.changed_on_humanized}
      </Text>
    </Card>
  );
}

function DashboardDetail({ envId, id }: { envId: string; id: number }) {
  const { t } = useI18n();
  const d = useQuery({
    queryKey: ['dashboard', envId, id],
    queryFn: () => must(api.GET('/api/dashboards/{id}', { params: { path: { id: String(id) }, query: { env_id: envId } } })),
  });
  const data = d.data as unknown as
    | {
        title?: string;
        charts?: Array<{ id: number; name?: string; slice_name?: string; viz_type?: string }>;
        datasets?: Array<{ id: number; name?: string; table_name?: string }>;
      }
    | undefined;
  return (
    <Stack>
      <ProblemAlert error={d.error} />
      {data && (
        <>
          <Title order={4}>{data.title}</Title>
          <Table>
            <Table.Tbody>
              {(data.charts ?? []).map((c) => (
                <Table.Tr key={`c${c.id}`}>
                  <Table.Td>{t.chart}</Table.Td>
                  <Table.Td>{c.name ?? c.slice_name}</Table.Td>
                  <Table.Td>{c.viz_type}</Table.Td>
                </Table.Tr>
              ))}
              {(data.datasets ?? []).map((s) => (
                <Table.Tr key={`d${s.id}`}>
                  <Table.Td>{t.dataset}</Table.Td>
                  <Table.Td>{s.name ?? s.table_name}</Table.Td>
                  <Table.Td />
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <ValidateButton envId={envId} dashboardId={id} />
          <Backups envId={envId} id={id} />
        </>
      )}
    </Stack>
  );
}

/** The dashboard's backups: back up now, or restore one (each a task, followed on its page). */
function Backups({ envId, id }: { envId: string; id: number }) {
  const { t } = useI18n();
  const can = useCan();
  const qc = useQueryClient();
  const backups = useQuery({
    queryKey: ['backups', envId, id],
    queryFn: () => must(api.GET('/api/dashboards/{id}/backups', { params: { path: { id }, query: { env_id: envId } } })),
  });
  const backup = useMutation({
    mutationFn: () => must(api.POST('/api/dashboards/backup', { body: { env_id: envId, dashboard_ids: [id] } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['backups', envId, id] }),
  });
  const restore = useMutation({
    mutationFn: (backupId: string) =>
      must(api.POST('/api/dashboards/backups/{backup_id}/restore', { params: { path: { backup_id: backupId } }, body: {} })),
  });
  const started = restore.data ?? backup.data;
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={5}>{t.backups}</Title>
        {can('dashboards:BACKUP') && (
          <Button size="compact-sm" variant="light" onClick={() => backup.mutate()} loading={backup.isPending}>
            {t.backUpNow}
          </Button>
        )}
      </Group>
      <ProblemAlert error={backups.error ?? backup.error ?? restore.error} />
      {started && (
        <Anchor component={Link} to={`/tasks/${started.task_id}`}>
          {started.task_id}
        </Anchor>
      )}
      <Table>
        <Table.Tbody>
          {backups.data?.items.map((b) => (
            <Table.Tr key={b.backup_id}>
              <Table.Td>{t.dateTime(b.created_at)}</Table.Td>
              <Table.Td>{b.dashboard_title}</Table.Td>
              <Table.Td>{t.kib(Math.round(b.size / 1024))}</Table.Td>
              <Table.Td>
                {can('dashboards:BACKUP') && (
                  <Button size="compact-xs" color="orange" variant="light" onClick={() => restore.mutate(b.backup_id)}>
                    {t.restore}
                  </Button>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
