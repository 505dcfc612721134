import { Anchor, Badge, Card, Group, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api, must } from '../api.ts';
import { useEnvironments } from '../components/EnvSelect.tsx';
import { useI18n } from '../i18n.tsx';

const OUTCOME_COLOR: Record<string, string> = {
  SUCCEEDED: '#2f9e44',
  FAILED: '#e03131',
  CANCELLED: '#f08c00',
  RUNNING: '#1971c2',
  PENDING: '#868e96',
  AWAITING_APPROVAL: '#9c36b5',
};

/** Tasks outcomes per kind and durations over time, from the latest 100 tasks the caller may see. */
export function OverviewPage() {
  const { t } = useI18n();
  const envs = useEnvironments();
  const tasks = useQuery({
    queryKey: ['tasks-overview'],
    queryFn: () => must(api.GET('/api/tasks', { params: { query: { page_size: 100 } } })),
  });
  const items = tasks.data?.items ?? [];
  return (
    <Stack>
      <Title order={2}>{t.overview}</Title>
      <SimpleGrid cols={{ base: 1, md: 3 }}>
        <Total label={t.environments} value={envs.data?.total ?? '—'} />
        <Total label={t.tasks} value={tasks.data?.total ?? '—'} />
        <Total label={t.failedTasks} value={items.filter((x) => x.status === 'FAILED').length} color="red" />
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
        {envs.data?.items.map((e) => (
          <EnvironmentCard key={e.id} id={e.id} name={e.name} />
        ))}
      </SimpleGrid>
      <OutcomesChart perKind={outcomesPerKind(items)} />
      <DurationsChart durations={durationsOf(items)} />
    </Stack>
  );
}

type TaskRow = { type: string; status: string; started_at?: string | null; finished_at?: string | null };
type Duration = { type: string; at: number; seconds: number };

/** Per task kind, how many tasks ended in (or are in) each status. */
function outcomesPerKind(items: TaskRow[]): Map<string, Record<string, number>> {
  const perKind = new Map<string, Record<string, number>>();
  for (const task of items) {
    const row = perKind.get(task.type) ?? {};
    row[task.status] = (row[task.status] ?? 0) + 1;
    perKind.set(task.type, row);
  }
  return perKind;
}

/** How long each finished migration and backup took, oldest first. */
function durationsOf(items: TaskRow[]): Duration[] {
  return items
    .filter((x) => (x.type === 'migration' || x.type === 'backup') && x.started_at && x.finished_at)
    .map((x) => ({
      type: x.type,
      at: new Date(x.finished_at!).getTime(),
      seconds: (new Date(x.finished_at!).getTime() - new Date(x.started_at!).getTime()) / 1000,
    }))
    .sort((a, b) => a.at - b.at);
}

function Total({ label, value, color }: { label: string; value: number | string; color?: string }) {
  return (
    <Card withBorder>
      <Text c="dimmed">{label}</Text>
      <Text size="xl" fw={700} c={color}>
        {value}
      </Text>
    </Card>
  );
}

/** One bar per kind, its statuses stacked, scaled to the kind with the most tasks. */
function OutcomesChart({ perKind }: { perKind: Map<string, Record<string, number>> }) {
  const { t } = useI18n();
  const maxCount = Math.max(1, ...[...perKind.values()].map((r) => Object.values(r).reduce((a, b) => a + b, 0)));
  return (
    <Card withBorder>
      <Title order={4}>{t.outcomesPerKind}</Title>
      <svg
        role="img"
        aria-label={t.outcomesPerKind}
        width="100%"
        height={Math.max(40, perKind.size * 28)}
        viewBox={`0 0 600 ${Math.max(40, perKind.size * 28)}`}
      >
        {[...perKind.entries()].map(([kind, row], i) => {
          let x = 130;
          return (
            <g key={kind} transform={`translate(0 ${i * 28})`}>
              <text x={0} y={18} fontSize={13}>
                {kind}
              </text>
              {Object.entries(row).map(([status, n]) => {
                const w = (n / maxCount) * 450;
                const rect = (
                  <rect key={status} x={x} y={4} width={w} height={18} fill={OUTCOME_COLOR[status]}>
                    <title>{`${status}: ${n}`}</title>
                  </rect>
                );
                x += w;
                return rect;
              })}
            </g>
          );
        })}
      </svg>
      <Group gap="xs">
        {Object.entries(OUTCOME_COLOR).map(([s, c]) => (
          <Text key={s} size="xs" style={{ color: c }}>
            ■ {s}
          </Text>
        ))}
      </Group>
    </Card>
  );
}

/** One dot per finished migration or backup, in the order they finished, its height the time it took. */
function DurationsChart({ durations }: { durations: Duration[] }) {
  const { t } = useI18n();
  const maxSeconds = Math.max(1, ...durations.map((d) => d.seconds));
  return (
    <Card withBorder>
      <Title order={4}>{t.durations}</Title>
      <svg role="img" aria-label={t.durations} width="100%" height={160} viewBox="0 0 600 160">
        <line x1={30} y1={140} x2={600} y2={140} stroke="#ccc" />
        {durations.map((d, i) => (
          <circle
            key={i}
            cx={30 + (i + 0.5) * (570 / Math.max(durations.length, 1))}
            cy={140 - (d.seconds / maxSeconds) * 130}
            r={5}
            fill={d.type === 'migration' ? '#1971c2' : '#2f9e44'}
          >
            <title>{`${d.type} ${t.seconds(d.seconds.toFixed(1))}`}</title>
          </circle>
        ))}
        <text x={0} y={14} fontSize={11}>
          {t.seconds(maxSeconds.toFixed(0))}
        </text>
      </svg>
      <Text size="xs" c="dimmed">
        {t.durationsLegend}
      </Text>
    </Card>
  );
}

/** One environment: how many dashboards, its last backup, its last drift report. */
function EnvironmentCard({ id, name }: { id: string; name: string }) {
  const { t } = useI18n();
  const dashboards = useQuery({
    queryKey: ['env-dashboards-total', id],
    retry: false,
    queryFn: () => must(api.GET('/api/dashboards', { params: { query: { env_id: id, page_size: 1, page_context: 'other' } } })),
  });
  const last = (type: 'backup' | 'drift_report') =>
    useQuery({
      queryKey: ['env-last', id, type],
      queryFn: () => must(api.GET('/api/tasks', { params: { query: { env_id: id, task_type: type, page_size: 1 } } })),
    });
  const backup = last('backup').data?.items[0];
  const drift = last('drift_report').data?.items[0];
  return (
    <Card withBorder data-testid="env-card">
      <Anchor component={Link} to={`/dashboards?env=${id}`} fw={600}>
        {name}
      </Anchor>
      <Text size="sm">
        {t.dashboards}: {dashboards.data?.total ?? (dashboards.isError ? '—' : '…')}
      </Text>
      <Text size="sm" component="div">
        {t.lastBackup}:{' '}
        {backup ? (
          <Badge size="xs" color={backup.status === 'SUCCEEDED' ? 'green' : 'red'}>
            {t.dateTime(backup.created_at)}
          </Badge>
        ) : (
          '—'
        )}
      </Text>
      <Text size="sm">
        {t.lastDrift}:{' '}
        {drift ? (
          <Anchor component={Link} to={`/tasks/${drift.id}`} size="sm">
            {drift.status}
          </Anchor>
        ) : (
          '—'
        )}
      </Text>
    </Card>
  );
}
