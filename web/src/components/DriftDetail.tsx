import { Badge, Code, Paper, Stack, Table, Text, Title } from '@mantine/core';
import type { DriftItem } from '../../../contracts/schedules.ts';
import { useI18n } from '../i18n.tsx';
import { ObjectTable } from './ObjectTable.tsx';

const STATUS_COLOR: Record<DriftItem['status'], string> = { in_sync: 'green', drifted: 'orange', failed: 'red' };

/**
 * A drift report's dashboard opened: the objects that differ (with the fields), each companion
 * that differs with what differs, the companion kinds that were not compared and why (never
 * drift, never in sync), and what the comparison could not check. Its next actions follow.
 */
export function DriftDetail({ item }: { item: DriftItem }) {
  const { t } = useI18n();
  const companions = item.companions ?? [];
  return (
    <Paper withBorder p="sm" data-testid="drift-detail">
      <Title order={4}>
        {item.title ?? `#${item.id}`} <Badge color={STATUS_COLOR[item.status]}>{item.status}</Badge>
      </Title>
      <Stack gap="xs" mt="xs">
        {item.differences.length > 0 && (
          <ObjectTable
            testId="drift-objects"
            rows={item.differences.map((o) => ({
              key: `${o.kind}-${o.uuid}`,
              kind: o.kind,
              name: o.name,
              action: o.action,
              changes: o.differences.map((d) => d.field).join(', '),
            }))}
          />
        )}
        {companions.length > 0 && <CompanionDiffs companions={companions} />}
        {(item.companions_not_compared ?? []).map((k) => (
          <Text key={k.kind} size="sm" c="orange" data-testid="drift-not-compared">
            <Code>{k.kind}</Code> {t.companionUnavailable}: {k.reason}
            {k.dropped.map((d) => ` · '${d.name}'${d.note ? ` (${d.note})` : ''}`).join('')}
          </Text>
        ))}
        {(item.warnings ?? []).map((w, n) => (
          <Text key={n} size="sm" c="orange" data-testid="drift-warning">
            {w.step}: {w.message}
          </Text>
        ))}
      </Stack>
    </Paper>
  );
}

type CompanionDiff = NonNullable<DriftItem['companions']>[number];

/** Each companion that differs: its kind, name (and what it is on), action, and what to do about it. */
function CompanionDiffs({ companions }: { companions: CompanionDiff[] }) {
  const { t } = useI18n();
  return (
    <Table aria-label={t.companions} data-testid="drift-companions">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{t.companionKind}</Table.Th>
          <Table.Th>{t.companionName}</Table.Th>
          <Table.Th>{t.companionAction}</Table.Th>
          <Table.Th>{t.companionDetail}</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {companions.map((c, n) => (
          <Table.Tr key={n} data-testid="drift-companion" data-kind={c.kind}>
            <Table.Td>
              <Code>{c.kind}</Code>
            </Table.Td>
            <Table.Td>
              {c.name}
              {c.on && (
                <Text span size="xs" c="dimmed">
                  {' '}
                  ({c.on})
                </Text>
              )}
            </Table.Td>
            <Table.Td>
              <Badge size="sm" variant="light" color={c.action === 'missing' ? 'red' : 'blue'}>
                {c.action}
              </Badge>
            </Table.Td>
            <Table.Td>
              <Text size="xs">
                {c.difference} → {c.next_action.description}
              </Text>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
