import { Badge, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useI18n } from '../i18n.tsx';
import { NextActions } from './NextActions.tsx';
import type { useTask } from './tasks.ts';

export type ItemsSummary = NonNullable<NonNullable<ReturnType<typeof useTask>['data']>['items_summary']>;

const OUTCOME_COLOR: Record<string, string> = { succeeded: 'green', failed: 'red', skipped: 'yellow', planned: 'blue' };
const ACTION_COLOR: Record<string, string> = { create: 'green', update: 'orange', reuse: 'blue', unchanged: 'gray' };

const seconds = (ms: number | null) => (ms === null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

function Counts({
  label,
  counts,
  colors,
  testId,
}: {
  label: string;
  counts: Record<string, number>;
  colors: Record<string, string>;
  testId: string;
}) {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  return (
    <Paper withBorder p="sm" data-testid={testId}>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Group gap="xs" mt={4}>
        {entries.length ? (
          entries.map(([k, n]) => <Badge key={k} color={colors[k] ?? 'gray'} variant="light">{`${k} ${n}`}</Badge>)
        ) : (
          <Text size="sm">—</Text>
        )}
      </Group>
    </Paper>
  );
}

/** The task's items at a glance: counts by outcome, change and object action, durations, and the actions over all failed items. */
export function TaskSummary({ summary }: { summary: ItemsSummary }) {
  const { t } = useI18n();
  const d = summary.durations;
  return (
    <Stack data-testid="items-summary">
      <Title order={3}>
        {t.itemsSummary} <Badge variant="outline">{summary.total}</Badge>
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
        <Counts label={t.byOutcome} counts={summary.by_outcome} colors={OUTCOME_COLOR} testId="summary-outcomes" />
        <Counts label={t.byChange} counts={summary.by_change} colors={{ changed: 'orange', unchanged: 'gray' }} testId="summary-changes" />
        <Counts
          label={t.objectActions(summary.objects.total)}
          counts={summary.objects.by_action}
          colors={ACTION_COLOR}
          testId="summary-objects"
        />
        <Paper withBorder p="sm" data-testid="summary-durations">
          <Text size="sm" c="dimmed">
            {t.taskDurations}
          </Text>
          <Text size="sm">
            {t.queued} {seconds(d.queued_ms)} · {t.ran} {seconds(d.run_ms)}
            {d.migration_ms !== null && ` · ${t.migrationTime} ${seconds(d.migration_ms)}`}
            {d.verification_ms !== null && ` · ${t.verificationTime} ${seconds(d.verification_ms)}`}
          </Text>
        </Paper>
      </SimpleGrid>
      <NextActions actions={summary.bulk_actions} title={t.forAllFailed} />
    </Stack>
  );
}
