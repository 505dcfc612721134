import { Badge, Code, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import type { DashboardOutcome, ObjectPlan } from '../../../contracts/migration.ts';
import { useI18n } from '../i18n.tsx';
import { EnvRuleEffects } from './EnvRuleEffects.tsx';
import { ObjectTable } from './ObjectTable.tsx';

const ACTION_COLOR: Record<ObjectPlan['action'], string> = { create: 'green', update: 'orange', reuse: 'blue', unchanged: 'gray' };

const show = (v: unknown) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** What a migration did or would do, per object, with source and target side by side for each changed field. */
export function ObjectDiff({ outcome }: { outcome: DashboardOutcome }) {
  const { t } = useI18n();
  return (
    <Paper withBorder p="sm" data-testid="object-diff">
      <Group justify="space-between">
        <Title order={4}>
          {outcome.title ?? `#${outcome.id}`} <Badge>{outcome.status}</Badge>
        </Title>
        {outcome.error && <Text c="red">{outcome.error}</Text>}
      </Group>
      <ObjectTable
        rows={outcome.objects.map((o) => ({
          key: o.uuid + o.file,
          kind: o.kind,
          name: o.name,
          action: (
            <Badge color={ACTION_COLOR[o.action]} data-testid="object-action">
              {o.action}
            </Badge>
          ),
          changes: (
            <>
              {o.note && <Text size="xs">{o.note}</Text>}
              <Stack gap={4}>
                {(o.differences ?? []).map((d) => (
                  <div key={d.field}>
                    <Text size="xs" fw={600}>
                      {d.field}
                    </Text>
                    <SimpleGrid cols={2} spacing={4}>
                      <Code block c="red.8" aria-label={t.targetBefore}>
                        {show(d.target)}
                      </Code>
                      <Code block c="green.8" aria-label={t.sourceAfter}>
                        {show(d.source)}
                      </Code>
                    </SimpleGrid>
                  </div>
                ))}
              </Stack>
            </>
          ),
        }))}
      />
      {outcome.collisions.length > 0 && (
        <Text size="sm" mt="xs">
          {outcome.collisions.map((c) => `${c.kind}: ${c.detail} → ${c.resolution}`).join('; ')}
        </Text>
      )}
      {outcome.env_rules?.length ? <EnvRuleEffects effects={outcome.env_rules} /> : null}
    </Paper>
  );
}
