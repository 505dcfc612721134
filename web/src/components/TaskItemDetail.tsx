import { Code, Stack, Table, Text } from '@mantine/core';
import type { DashboardOutcome } from '../../../contracts/migration.ts';
import type { ItemOutcome } from '../../../contracts/outcomes.ts';
import type { DriftItem } from '../../../contracts/schedules.ts';
import type { ValidationItem } from '../../../contracts/validation.ts';
import { BrowserScreenshots } from './BrowserScreenshots.tsx';
import { ChartVerdicts } from './ChartVerdicts.tsx';
import { CompanionsTable } from './CompanionsTable.tsx';
import { DriftDetail } from './DriftDetail.tsx';
import { EmbeddedUuids } from './EmbeddedUuids.tsx';
import { NextActions } from './NextActions.tsx';
import { ObjectDiff } from './ObjectDiff.tsx';
import { ValidationDetail } from './ValidationDetail.tsx';
import { VerificationState } from './VerificationState.tsx';

/**
 * One item opened: a migrated dashboard's objects and differences, its verification state (verified
 * by this task, or carried from an earlier one) with each chart's verdict, and its companions, a drift report's dashboard with what differs (./DriftDetail.tsx), another kind's
 * fields; Superset's own answer when it refused, the browser check's screenshots and the item's
 * next actions. Rendered only when a person opens the item.
 */
export function TaskItemDetail({ taskId, type, item }: { taskId: string; type: string; item: ItemOutcome }) {
  const migration = type === 'migration' && Array.isArray((item as Partial<DashboardOutcome>).objects);
  const drift = type === 'drift_report' && Array.isArray((item as Partial<DriftItem>).differences);
  const validation = type === 'validate' && Array.isArray((item as Partial<ValidationItem>).charts);
  return (
    <Stack gap="xs" py="xs" data-testid="task-item-detail">
      {migration ? (
        <>
          <ObjectDiff outcome={item as DashboardOutcome} />
          <VerificationState item={item as DashboardOutcome} />
          <ChartVerdicts verification={(item as DashboardOutcome).verification} />
          <EmbeddedUuids companions={(item as DashboardOutcome).companions} />
          <CompanionsTable companions={(item as DashboardOutcome).companions} />
        </>
      ) : drift ? (
        <DriftDetail item={item as DriftItem} />
      ) : validation ? (
        <ValidationDetail item={item as ValidationItem} />
      ) : (
        <Table>
          <Table.Tbody>
            <Table.Tr>
              <Table.Td>{item.kind}</Table.Td>
              <Table.Td>{item.title ?? item.id}</Table.Td>
              <Table.Td>{item.status}</Table.Td>
              <Table.Td>{item.step}</Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
      )}
      {item.error && (
        <Text c="red" size="sm">
          {item.error}
        </Text>
      )}
      {item.upstream_error && <Code block>{JSON.stringify({ id: item.id, step: item.step, upstream: item.upstream_error }, null, 2)}</Code>}
      <BrowserScreenshots taskId={taskId} items={[{ ...item, id: item.id ?? '' }]} />
      <NextActions actions={item.next_actions ?? []} />
    </Stack>
  );
}
