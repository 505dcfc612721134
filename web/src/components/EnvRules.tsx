import { Button, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must } from '../api.ts';
import { useCan } from '../auth.tsx';
import { useI18n } from '../i18n.tsx';
import { EnvSelect } from './EnvSelect.tsx';
import { ProblemAlert } from './ProblemAlert.tsx';

type Kind = 'schema' | 'catalog' | 'text';

/** Per-environment rules of a pair, beside its database mappings: the list in order, add and remove. */
export function EnvRules() {
  const { t } = useI18n();
  const can = useCan();
  const [source, setSource] = useState<string | null>(null);
  const [target, setTarget] = useState<string | null>(null);
  const path = { env_id: source!, target_env_id: target! };
  const rules = useQuery({
    queryKey: ['env-rules', source, target],
    enabled: !!source && !!target,
    queryFn: () => must(api.GET('/api/environments/{env_id}/rules/{target_env_id}', { params: { path } })),
  });
  return (
    <Stack mt="lg" data-testid="env-rules">
      <Title order={3}>{t.envRules}</Title>
      <Text size="sm" c="dimmed">
        {t.envRulesHelp}
      </Text>
      <Group>
        <EnvSelect label={t.source} value={source} onChange={setSource} />
        <EnvSelect label={t.target} value={target} onChange={setTarget} exclude={source} />
      </Group>
      <ProblemAlert error={rules.error} />
      {rules.data && <RuleTable items={rules.data.items} path={path} />}
      {rules.data && can('dashboards:MIGRATE') && <RuleForm path={path} />}
    </Stack>
  );
}

type Rule = { id: string; kind: Kind; from: string; to: string; description: string | null };

function RuleTable({ items, path }: { items: Rule[]; path: { env_id: string; target_env_id: string } }) {
  const { t } = useI18n();
  const can = useCan();
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: (rule_id: string) =>
      must(api.DELETE('/api/environments/{env_id}/rules/{target_env_id}/{rule_id}', { params: { path: { ...path, rule_id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['env-rules'] }),
  });
  return (
    <>
      <ProblemAlert error={remove.error} />
      <Table aria-label={t.envRules}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t.ruleKind}</Table.Th>
            <Table.Th>{t.ruleFrom}</Table.Th>
            <Table.Th>{t.ruleTo}</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {items.map((r) => (
            <Table.Tr key={r.id}>
              <Table.Td>{r.kind}</Table.Td>
              <Table.Td>{r.from}</Table.Td>
              <Table.Td>{r.to}</Table.Td>
              <Table.Td>
                {can('dashboards:MIGRATE') && (
                  <Button size="xs" variant="subtle" color="red" onClick={() => remove.mutate(r.id)} aria-label={`${t.delete} ${r.from}`}>
                    {t.delete}
                  </Button>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </>
  );
}

function RuleForm({ path }: { path: { env_id: string; target_env_id: string } }) {
  const { t } = useI18n();
  const qc = useQueryClient();
  const [kind, setKind] = useState<Kind>('schema');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const add = useMutation({
    mutationFn: () => must(api.POST('/api/environments/{env_id}/rules/{target_env_id}', { params: { path }, body: { kind, from, to } })),
    onSuccess: async () => {
      setFrom('');
      setTo('');
      await qc.invalidateQueries({ queryKey: ['env-rules'] });
    },
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate();
      }}
    >
      <Group align="end">
        <Select
          label={t.ruleKind}
          data={['schema', 'catalog', 'text']}
          value={kind}
          onChange={(v) => setKind((v as Kind) ?? 'schema')}
          allowDeselect={false}
          w={120}
        />
        <TextInput label={t.ruleFrom} value={from} onChange={(e) => setFrom(e.currentTarget.value)} required />
        <TextInput label={t.ruleTo} value={to} onChange={(e) => setTo(e.currentTarget.value)} />
        <Button type="submit" loading={add.isPending}>
          {t.addRule}
        </Button>
      </Group>
      <ProblemAlert error={add.error} />
    </form>
  );
}
