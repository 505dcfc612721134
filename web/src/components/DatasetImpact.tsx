import { Alert, Badge, Button, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../api.ts';
import { useI18n } from '../i18n.tsx';
import { ProblemAlert } from './ProblemAlert.tsx';

type Used = { id: number; name: string; via: string[] };

/** What uses the dataset (or one of its columns) here and in the environments it migrates to: read on request, since it lists the whole environment. */
export function DatasetImpact({ env, id }: { env: string; id: number }) {
  const { t } = useI18n();
  const [column, setColumn] = useState('');
  const [asked, setAsked] = useState<string | null>(null);
  const impact = useImpact(env, id, asked);
  return (
    <Stack gap="xs">
      <Title order={4}>{t.impact}</Title>
      <Group align="end">
        <TextInput label={t.impactColumn} value={column} onChange={(e) => setColumn(e.currentTarget.value)} />
        <Button onClick={() => setAsked(column.trim())} loading={impact.isFetching}>
          {t.impactAsk}
        </Button>
      </Group>
      <ProblemAlert error={impact.error} />
      {impact.data && <ImpactResult a={impact.data} />}
    </Stack>
  );
}

/** The impact query for the dataset and the asked column; off until something is asked. */
function useImpact(env: string, id: number, asked: string | null) {
  return useQuery({
    queryKey: ['impact', env, id, asked],
    enabled: asked !== null,
    queryFn: () =>
      must(
        api.GET('/api/environments/{env_id}/impact', {
          params: { path: { env_id: env }, query: { dataset: String(id), ...(asked ? { column: asked } : {}) } },
        }),
      ),
  });
}

type Impact = NonNullable<ReturnType<typeof useImpact>['data']>;

/** One impact answer: summary, unreadable parts, the users' table and the migration targets' summaries. */
function ImpactResult({ a }: { a: Impact }) {
  const { t } = useI18n();
  const rows = (kind: string, xs: Used[]) => xs.map((x) => ({ kind, ...x }));
  const all = [
    ...rows(t.dashboards, a.dashboards),
    ...rows(t.impactCharts, a.charts),
    ...rows(t.datasets, a.datasets),
    ...rows(t.impactSavedQueries, a.saved_queries),
    ...rows(t.impactReports, a.reports),
  ];
  return (
    <>
      <Text size="sm" data-testid="impact-summary">
        {t.impactSummary(a.charts.length, a.dashboards.length, a.checked_at)}
      </Text>
      {a.unreadable.map((u) => (
        <Alert key={u.kind} color="orange" role="alert">
          {t.impactUnreadable(u.kind, u.message)}
        </Alert>
      ))}
      <Table aria-label={t.impact}>
        <Table.Tbody>
          {all.map((x) => (
            <Table.Tr key={`${x.kind}-${x.id}`} data-testid="impact-row">
              <Table.Td>
                <Badge variant="light">{x.kind}</Badge>
              </Table.Td>
              <Table.Td>
                #{x.id} {x.name}
              </Table.Td>
              <Table.Td>
                <Text size="xs">{x.via.join('; ')}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {a.migrates_to.map((m) => (
        <Text key={m.env_id} size="sm">
          {m.env_name}: {m.impact ? t.impactSummary(m.impact.charts.length, m.impact.dashboards.length, m.impact.checked_at) : m.note}
        </Text>
      ))}
    </>
  );
}
