import { Badge, Code, Stack, Table, Text, Title } from '@mantine/core';
import { COMPANION_KIND_TRAITS, type CompanionItem, type CompanionKindReport } from '../../../contracts/companions.ts';
import { useI18n, type Lang } from '../i18n.tsx';

/**
 * A migrated dashboard's companions, one block per kind as the outcome lists them: the mode, whether
 * the environments offer the kind (the reason when not), and each companion's action with what
 * differs, whether this run wrote it, Superset's refusal and the next action. A kind with nothing
 * around the dashboard shows as one quiet line, so a person sees every kind was looked at.
 */
export function CompanionsTable({ companions }: { companions?: CompanionKindReport[] }) {
  const { t, lang } = useI18n();
  if (!companions?.length) return null;
  return (
    <Stack gap={4} data-testid="companions">
      <Title order={5}>{t.companions}</Title>
      <Table aria-label={t.companions} withRowBorders={false}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t.companionKind}</Table.Th>
            <Table.Th>{t.companionMode}</Table.Th>
            <Table.Th>{t.companionName}</Table.Th>
            <Table.Th>{t.companionAction}</Table.Th>
            <Table.Th>{t.companionDetail}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>{companions.flatMap((k) => kindRows(k, t, lang))}</Table.Tbody>
      </Table>
    </Stack>
  );
}

type Dict = ReturnType<typeof useI18n>['t'];

function kindRows(k: CompanionKindReport, t: Dict, lang: Lang) {
  const head = (
    <Table.Td>
      {/* A kind this console does not know (an API newer than it) shows its API name alone. */}
      {COMPANION_KIND_TRAITS[k.kind]?.label[lang]} <Code>{k.kind}</Code>
    </Table.Td>
  );
  const mode = (
    <Table.Td>
      {k.mode}
      {k.ignored_by_request && (
        <Badge ml={4} size="xs" color="yellow">
          {t.companionIgnored}
        </Badge>
      )}
    </Table.Td>
  );
  if (!k.available || k.items.length === 0) {
    return [
      <Table.Tr key={k.kind} data-testid="companion-kind" data-kind={k.kind}>
        {head}
        {mode}
        <Table.Td colSpan={3}>
          <Text size="sm" c={k.available ? 'dimmed' : 'orange'}>
            {k.available ? t.companionNone : `${t.companionUnavailable}: ${k.unavailable ?? ''}`}
          </Text>
        </Table.Td>
      </Table.Tr>,
    ];
  }
  return k.items.map((i, n) => (
    <Table.Tr key={`${k.kind}-${n}`} data-testid="companion-item" data-kind={k.kind}>
      {n === 0 ? head : <Table.Td />}
      {n === 0 ? mode : <Table.Td />}
      <Table.Td>
        {i.name}
        {i.on && (
          <Text span size="xs" c="dimmed">
            {' '}
            ({i.on})
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Badge size="sm" variant="light" color={actionColour(i)} data-testid="companion-action">
          {i.action}
        </Badge>
        {i.done && (
          <Text span size="xs" c="green" ml={4}>
            {t.companionWritten}
          </Text>
        )}
      </Table.Td>
      <Table.Td>{detail(i)}</Table.Td>
    </Table.Tr>
  ));
}

function actionColour(i: CompanionItem): string {
  if (i.error || i.action === 'missing') return 'red';
  if (i.action === 'create' || i.action === 'update') return 'blue';
  return 'gray';
}

function detail(i: CompanionItem) {
  const parts = [
    i.fields?.length ? i.fields.join(', ') : null,
    i.source_uuid ? `${i.source_uuid} → ${i.target_uuid ?? '—'}` : null,
    i.note ?? null,
    i.next_action ? `→ ${i.next_action.description}` : null,
  ].filter(Boolean);
  return (
    <Text size="xs" c={i.error ? 'red' : undefined}>
      {i.error ?? parts.join(' · ')}
    </Text>
  );
}
