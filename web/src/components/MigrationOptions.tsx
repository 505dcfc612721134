import { Anchor, Code, SegmentedControl, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import {
  COMPANION_KIND_TRAITS,
  COMPANION_KINDS,
  COMPANION_MODES,
  DEFAULT_COMPANION_MODES,
  type CompanionMode,
  type CompanionRequest,
} from '../../../contracts/companions.ts';
import { api, must } from '../api.ts';
import { useI18n } from '../i18n.tsx';
import { ProblemAlert } from './ProblemAlert.tsx';

/**
 * What travels besides the bundle, chosen before the dry run: a mode per companion kind, by its
 * label and its API name (the defaults are the API's, from contracts/companions.ts; only a change
 * is sent), whether copied
 * reports start paused, and the pair's per-environment rules that will rewrite the bundle (edited
 * on the Environments page; shown here so nobody migrates without knowing they apply).
 */
export function MigrationOptions({
  source,
  target,
  value,
  onChange,
}: {
  source: string;
  target: string;
  value: CompanionRequest;
  onChange: (v: CompanionRequest) => void;
}) {
  const { t, lang } = useI18n();
  const set = (kind: (typeof COMPANION_KINDS)[number], mode: CompanionMode) => {
    const next = { ...value };
    if (mode === DEFAULT_COMPANION_MODES[kind]) delete next[kind];
    else next[kind] = mode;
    onChange(next);
  };
  return (
    <Stack gap="xs" data-testid="migration-options">
      <Title order={4}>{t.companions}</Title>
      <Text size="sm" c="dimmed">
        {t.companionsHelp}
      </Text>
      <Table aria-label={t.companionModes} withRowBorders={false}>
        <Table.Tbody>
          {COMPANION_KINDS.map((kind) => (
            <Table.Tr key={kind}>
              <Table.Td>
                {COMPANION_KIND_TRAITS[kind].label[lang]} <Code>{kind}</Code>
              </Table.Td>
              <Table.Td>
                <SegmentedControl
                  size="xs"
                  aria-label={kind}
                  data={[...COMPANION_MODES]}
                  value={value[kind] ?? DEFAULT_COMPANION_MODES[kind]}
                  onChange={(m) => set(kind, m as CompanionMode)}
                />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <CompanionSwitches value={value} onChange={onChange} />
      <PairRules source={source} target={target} />
    </Stack>
  );
}

/** The two switches that opt out of a safe default: reports keep the source's on/off switch; an "any domain" embedded list replaces the target's. */
function CompanionSwitches({ value, onChange }: { value: CompanionRequest; onChange: (v: CompanionRequest) => void }) {
  const { t } = useI18n();
  const toggle = (key: 'pause_reports' | 'embedded_any_domain', on: boolean, byDefault: boolean) => {
    const next = { ...value };
    if (on === byDefault) delete next[key];
    else next[key] = on;
    onChange(next);
  };
  return (
    <>
      <Switch
        label={t.pauseReports}
        checked={value.pause_reports ?? true}
        onChange={(e) => toggle('pause_reports', e.currentTarget.checked, true)}
      />
      <Switch
        label={t.embeddedAnyDomain}
        checked={value.embedded_any_domain ?? false}
        onChange={(e) => toggle('embedded_any_domain', e.currentTarget.checked, false)}
      />
    </>
  );
}

function PairRules({ source, target }: { source: string; target: string }) {
  const { t } = useI18n();
  const rules = useQuery({
    queryKey: ['env-rules', source, target],
    queryFn: () =>
      must(api.GET('/api/environments/{env_id}/rules/{target_env_id}', { params: { path: { env_id: source, target_env_id: target } } })),
  });
  return (
    <Stack gap={4} data-testid="pair-rules">
      <Title order={4}>{t.envRules}</Title>
      <ProblemAlert error={rules.error} />
      {rules.data?.items.length === 0 && (
        <Text size="sm" c="dimmed">
          {t.noPairRules}
        </Text>
      )}
      {rules.data?.items.map((r) => (
        <Text size="sm" key={r.id} data-testid="pair-rule">
          <Code>{r.kind}</Code> <Code>{r.from}</Code> → <Code>{r.to}</Code>
        </Text>
      ))}
      <Anchor component={Link} to="/environments" size="sm">
        {t.editPairRules}
      </Anchor>
    </Stack>
  );
}

/** The request's `companions`, or nothing when every choice is the default. */
export function companionsBody(value: CompanionRequest): CompanionRequest | undefined {
  return Object.keys(value).length ? value : undefined;
}
