import { Code, Text } from '@mantine/core';
import type { CompanionKindReport } from '../../../contracts/companions.ts';
import { useI18n } from '../i18n.tsx';

/**
 * A migrated dashboard's embedded configuration: the source's uuid and the one Superset assigned
 * in the target, which host apps embedding the dashboard must be pointed at. Nothing when the
 * dashboard has no embedded configuration.
 */
export function EmbeddedUuids({ companions }: { companions?: CompanionKindReport[] }) {
  const { t } = useI18n();
  const items = (companions ?? []).filter((k) => k.kind === 'embedded').flatMap((k) => k.items.filter((i) => i.source_uuid));
  if (!items.length) return null;
  return (
    <Text size="sm" mt="xs" data-testid="embedded-uuids">
      {t.embeddedUuids}:{' '}
      {items.map((i) => (
        <span key={i.source_uuid}>
          <Code>{i.source_uuid}</Code> → <Code>{i.target_uuid ?? '—'}</Code>
        </span>
      ))}
    </Text>
  );
}
