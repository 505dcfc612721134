import { Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { useI18n } from '../i18n.tsx';

/** One object's row: its kind and name, what was (or would be) done, and what differs. */
export interface ObjectRow {
  key: string;
  kind: string;
  name: string;
  action: ReactNode;
  changes: ReactNode;
}

/** The objects of a dashboard as a migration's plan and a drift report both list them. */
export function ObjectTable({ rows, testId }: { rows: ObjectRow[]; testId?: string }) {
  const { t } = useI18n();
  return (
    <Table mt="xs" data-testid={testId}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{t.objectKind}</Table.Th>
          <Table.Th>{t.objectName}</Table.Th>
          <Table.Th>{t.objectAction}</Table.Th>
          <Table.Th>{t.objectChanges}</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((r) => (
          <Table.Tr key={r.key}>
            <Table.Td>{r.kind}</Table.Td>
            <Table.Td>{r.name}</Table.Td>
            <Table.Td>{r.action}</Table.Td>
            <Table.Td>{r.changes}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
