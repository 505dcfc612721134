import { Badge, Code, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import type { EnvRuleEffect } from '../../../contracts/env-rules.ts';
import { useI18n } from '../i18n.tsx';

/** What each per-environment rule did (or, in a dry run, would do) to a dashboard: field by field, and the ones that matched nothing. */
export function EnvRuleEffects({ effects }: { effects: EnvRuleEffect[] }) {
  const { t } = useI18n();
  return (
    <Stack gap="xs" mt="sm" data-testid="env-rule-effects">
      <Title order={5}>{t.envRules}</Title>
      {effects.map((e) => (
        <Stack key={e.id} gap={4}>
          {/* A Badge is a div: the line is a div too (a div inside a p is invalid HTML, and React says so). */}
          <Text size="sm" component="div">
            <Badge variant="light">{e.kind}</Badge> <Code>{e.from}</Code> → <Code>{e.to}</Code>{' '}
            <Badge color={e.matched ? 'blue' : 'gray'}>{t.ruleMatched(e.matched)}</Badge>
          </Text>
          {e.note && (
            <Text size="xs" c="dimmed">
              {e.note}
            </Text>
          )}
          {e.objects.map((o) => (
            <div key={`${o.file}:${o.field}`}>
              <Text size="xs" fw={600}>
                {o.object} · {o.field}
              </Text>
              <SimpleGrid cols={2} spacing={4}>
                <Code block c="red.8" aria-label={t.ruleBefore}>
                  {o.before ?? '—'}
                </Code>
                <Code block c="green.8" aria-label={t.ruleAfter}>
                  {o.after ?? '—'}
                </Code>
              </SimpleGrid>
            </div>
          ))}
          {e.unreadable.map((u) => (
            <Text key={`${u.file}:${u.field}`} size="xs" c="orange">
              {u.object} · {u.field}: {u.reason}
            </Text>
          ))}
        </Stack>
      ))}
    </Stack>
  );
}
