import { Badge, Table, Text } from '@mantine/core';
import type { ChartVerdict, ValidationItem } from '../../../contracts/validation.ts';
import { useI18n } from '../i18n.tsx';

const COLOUR: Record<ChartVerdict, string> = { passed: 'green', broken: 'red', not_verifiable: 'gray' };

/** A validated dashboard opened: its history (first seen broken, last passed) and each chart's verdict with its time and Superset's message or the reason. */
export function ValidationDetail({ item }: { item: ValidationItem }) {
  const { t } = useI18n();
  return (
    <>
      <Text size="sm" data-testid="validation-history">
        {t.validationHistory(item.status, item.checked_at, item.first_seen_broken_at, item.last_passed_at, item.newly_broken)}
      </Text>
      <Table aria-label={t.validationCharts}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t.name}</Table.Th>
            <Table.Th>{t.validationVerdict}</Table.Th>
            <Table.Th>{t.validationCheckedAt}</Table.Th>
            <Table.Th>{t.validationWhy}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {item.charts.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>{c.name}</Table.Td>
              <Table.Td>
                <Badge color={COLOUR[c.verdict]}>{c.verdict}</Badge>
              </Table.Td>
              <Table.Td>{c.checked_at}</Table.Td>
              <Table.Td>
                {c.error ?? c.reason ?? (c.rows !== undefined ? t.validationRows(c.rows) : '')}
                {c.first_seen_broken_at ? ` (${t.validationSince(c.first_seen_broken_at)})` : ''}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </>
  );
}
