import { Code, Stack, Table, Text, Title } from '@mantine/core';
import type { PairSettings } from '../../../contracts/env-rules.ts';
import { useI18n } from '../i18n.tsx';

/**
 * What an approver approves besides the request itself: the per-environment rules and saved
 * database mappings the task will apply, frozen when it was requested. A run whose stored rules
 * no longer match this digest is refused as stale, so the page shows exactly what would run.
 */
export function ApprovalSettings({ settings }: { settings: PairSettings }) {
  const { t } = useI18n();
  return (
    <Stack gap="xs" data-testid="approval-settings">
      <Title order={4}>{t.frozenSettings}</Title>
      <Text size="sm" c="dimmed">
        {t.frozenSettingsHint} <Code>{settings.digest.slice(0, 16)}</Code>
      </Text>
      {settings.rules.length === 0 ? (
        <Text size="sm">{t.noRules}</Text>
      ) : (
        <Table data-testid="approval-rules">
          <Table.Tbody>
            {settings.rules.map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td>{r.kind}</Table.Td>
                <Table.Td>
                  <Code>{r.from}</Code>
                </Table.Td>
                <Table.Td>→</Table.Td>
                <Table.Td>
                  <Code>{r.to}</Code>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {settings.db_mappings.length > 0 && (
        <Table data-testid="approval-mappings">
          <Table.Tbody>
            {settings.db_mappings.map((m) => (
              <Table.Tr key={m.source_database_id}>
                <Table.Td>{m.source_database_name}</Table.Td>
                <Table.Td>→</Table.Td>
                <Table.Td>#{m.target_database_id}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
