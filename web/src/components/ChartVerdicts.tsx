import { Badge, Group, Table, Text } from '@mantine/core';
import type { ChartClassification, Verification } from '../../../contracts/migration.ts';

const CLASS_COLOR: Record<ChartClassification, string> = {
  passes: 'green',
  broken_by_migration: 'red',
  failing_in_source: 'orange',
  not_verifiable: 'gray',
};
const ORDER: ChartClassification[] = ['broken_by_migration', 'failing_in_source', 'not_verifiable', 'passes'];

/**
 * A dashboard's chart checks: the count per classification, then each chart with its badge and
 * why (the classifications are the API's names, as the console shows technical identifiers).
 * Results from before the classification show nothing here.
 */
export function ChartVerdicts({ verification }: { verification?: Verification }) {
  const charts = (verification?.charts ?? []).filter((c) => c.classification);
  if (!charts.length) return null;
  const rank = (c: ChartClassification | undefined) => ORDER.indexOf(c ?? 'passes');
  const sorted = [...charts].sort((a, b) => rank(a.classification) - rank(b.classification));
  return (
    <>
      <Group gap="xs" mt="xs" data-testid="chart-classes">
        {ORDER.filter((k) => charts.some((c) => c.classification === k)).map((k) => (
          <Badge key={k} color={CLASS_COLOR[k]} variant="light">
            {k}: {charts.filter((c) => c.classification === k).length}
          </Badge>
        ))}
      </Group>
      <Table mt="xs" data-testid="chart-verdicts">
        <Table.Tbody>
          {sorted.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>{c.name}</Table.Td>
              <Table.Td>
                <Text size="xs" c="dimmed">
                  {c.viz_type}
                  {c.check ? ` · ${c.check}` : ''}
                </Text>
              </Table.Td>
              <Table.Td>
                <Badge color={CLASS_COLOR[c.classification!]} size="sm">
                  {c.classification}
                </Badge>
              </Table.Td>
              <Table.Td>
                <Text size="xs">{c.error ?? c.source_error ?? c.reason ?? ''}</Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </>
  );
}
