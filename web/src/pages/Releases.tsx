import { Alert, Anchor, Badge, Button, Code, Group, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, must } from '../api.ts';
import { useCan, useMe } from '../auth.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { useI18n } from '../i18n.tsx';

const STATE_COLOR: Record<string, string> = {
  blocked: 'red',
  check_failed: 'red',
  checked: 'teal',
  approved: 'green',
  published: 'green',
  rejected: 'gray',
  revoked: 'gray',
  publish_failed: 'red',
};

export function ReleasesPage() {
  const { t } = useI18n();
  const list = useQuery({
    queryKey: ['candidates'],
    queryFn: () => must(api.GET('/api/v2/clean-release/candidates', { params: { query: { page_size: 100 } } })),
  });
  return (
    <Stack>
      <Title order={2}>{t.releases}</Title>
      <ProblemAlert error={list.error} />
      <Table striped aria-label={t.releases}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t.name}</Table.Th>
            <Table.Th>{t.status}</Table.Th>
            <Table.Th>{t.target}</Table.Th>
            <Table.Th>{t.createdColumn}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {list.data?.items.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>
                <Anchor component={Link} to={`/releases/${c.id}`}>
                  {c.name}
                </Anchor>
              </Table.Td>
              <Table.Td>
                <Badge color={STATE_COLOR[c.state] ?? 'blue'}>{c.state}</Badge>
              </Table.Td>
              <Table.Td>{c.target_env_id}</Table.Td>
              <Table.Td>{t.dateTime(c.created_at)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

type Decision = 'approve' | 'reject' | 'publish' | 'revoke';
const DECISION_STATES: Record<Decision, string[]> = {
  approve: ['checked'],
  reject: ['draft', 'prepared', 'blocked', 'checking', 'checked', 'check_failed', 'approved'],
  publish: ['approved'],
  revoke: ['published', 'publish_failed'],
};

const useCandidate = (id: string) =>
  useQuery({
    queryKey: ['candidate', id],
    queryFn: () => must(api.GET('/api/v2/clean-release/candidates/{candidate_id}', { params: { path: { candidate_id: id } } })),
    refetchInterval: (q) => (['checking', 'publishing', 'revoking'].includes(q.state.data?.state ?? '') ? 1500 : false),
  });
type Candidate = NonNullable<ReturnType<typeof useCandidate>['data']>;

/** The preparation steps of a candidate: its artifacts, manifest, preparation and checks. */
function useReleaseStep(id: string, onSuccess: () => Promise<unknown>) {
  return useMutation({
    mutationFn: async (s: 'artifacts' | 'manifest' | 'prepare' | 'checks') => {
      const path = { candidate_id: id };
      if (s === 'artifacts')
        return must(api.POST('/api/v2/clean-release/candidates/{candidate_id}/artifacts', { params: { path }, body: {} }));
      if (s === 'manifest') return must(api.POST('/api/v2/clean-release/candidates/{candidate_id}/manifest', { params: { path } }));
      if (s === 'prepare') return must(api.POST('/api/v2/clean-release/candidates/{candidate_id}/prepare', { params: { path } }));
      return must(api.POST('/api/v2/clean-release/candidates/{candidate_id}/checks', { params: { path } }));
    },
    onSuccess,
  });
}

/** One candidate: artifacts with hosts, the manifest, violations and checks, and the decisions a release manager may take. */
export function ReleasePage() {
  const { t } = useI18n();
  const id = useParams().id!;
  const can = useCan();
  const qc = useQueryClient();
  const c = useCandidate(id);
  const report = useQuery({
    queryKey: ['release-report', c.data?.report_id],
    enabled: !!c.data?.report_id,
    queryFn: () => must(api.GET('/api/v2/clean-release/reports/{report_id}', { params: { path: { report_id: c.data!.report_id! } } })),
  });
  const refresh = () => qc.invalidateQueries({ queryKey: ['candidate', id] });
  const step = useReleaseStep(id, refresh);
  const data = c.data;
  if (!data) return <ProblemAlert error={c.error} />;
  const violations = (step.data as { violations?: Array<{ host: string; rule?: string; where?: unknown }> } | undefined)?.violations;
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>
          {data.name}{' '}
          <Badge color={STATE_COLOR[data.state] ?? 'blue'} data-testid="candidate-state">
            {data.state}
          </Badge>
        </Title>
        <Text size="sm" c="dimmed">
          {t.workflow(data.workflow_id)}
        </Text>
      </Group>
      {can('clean_release:WRITE') && (
        <Group>
          {(['artifacts', 'manifest', 'prepare', 'checks'] as const).map((s) => (
            <Button key={s} variant="light" onClick={() => step.mutate(s)} loading={step.isPending && step.variables === s}>
              {t.releaseSteps[s]}
            </Button>
          ))}
        </Group>
      )}
      <ProblemAlert error={step.error} />
      {violations && violations.length > 0 && (
        <Alert color="red" title={t.violations}>
          <Code block>{JSON.stringify(violations, null, 2)}</Code>
        </Alert>
      )}
      <Title order={4}>{t.artifacts}</Title>
      <Artifacts candidate={data} />
      {data.manifest_id && <Text size="sm">{t.manifest(data.manifest_id)}</Text>}
      {report.data && (
        <>
          <Title order={4}>{t.checks}</Title>
          <Code block>{JSON.stringify(report.data, null, 2).slice(0, 4000)}</Code>
        </>
      )}
      <Decisions id={id} candidate={data} onDone={refresh} />
    </Stack>
  );
}

/** The candidate's artifacts: each dashboard's bundle hash, file count and the hosts it reaches. */
function Artifacts({ candidate }: { candidate: Candidate }) {
  const { t } = useI18n();
  return (
    <Table>
      <Table.Tbody>
        {(candidate.artifacts ?? []).map((a) => (
          <Table.Tr key={a.dashboard_uuid}>
            <Table.Td>{a.title ?? a.dashboard_uuid}</Table.Td>
            <Table.Td>
              <Code>{a.sha256.slice(0, 16)}</Code>
            </Table.Td>
            <Table.Td>{t.fileCount(a.files)}</Table.Td>
            <Table.Td>{a.hosts.map((h) => `${h.host} (${h.role})`).join(', ')}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** The decisions taken so far, and those a release manager may take now (never approving their own candidate). */
function Decisions({ id, candidate: data, onDone }: { id: string; candidate: Candidate; onDone: () => Promise<unknown> }) {
  const { t } = useI18n();
  const can = useCan();
  const me = useMe().data;
  const [comment, setComment] = useState('');
  const decide = useMutation({
    mutationFn: (d: Decision) => {
      const opts = { params: { path: { candidate_id: id } }, body: comment ? { comment } : {} };
      if (d === 'approve') return must(api.POST('/api/v2/clean-release/candidates/{candidate_id}/approve', opts));
      if (d === 'reject') return must(api.POST('/api/v2/clean-release/candidates/{candidate_id}/reject', opts));
      if (d === 'publish') return must(api.POST('/api/v2/clean-release/candidates/{candidate_id}/publish', opts));
      return must(api.POST('/api/v2/clean-release/candidates/{candidate_id}/revoke', opts));
    },
    onSuccess: onDone,
  });
  const published = decide.data as { task_id?: string } | undefined;
  const author = data.created_by === me?.username; // the candidate names its author by username
  return (
    <>
      <ProblemAlert error={decide.error} />
      <Title order={4}>{t.decisions}</Title>
      <Table>
        <Table.Tbody>
          {(data.decisions ?? []).map((d, n) => (
            <Table.Tr key={n}>
              <Table.Td>{d.action}</Table.Td>
              <Table.Td>{d.by}</Table.Td>
              <Table.Td>{d.comment}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {can('clean_release:APPROVE') && (
        <Group align="end">
          <Textarea label={t.comment} value={comment} onChange={(e) => setComment(e.currentTarget.value)} w={320} />
          {(['approve', 'reject', 'publish', 'revoke'] as const)
            .filter((d) => DECISION_STATES[d].includes(data.state) && !(d === 'approve' && author))
            .map((d) => (
              <Button
                key={d}
                color={d === 'reject' || d === 'revoke' ? 'red' : 'green'}
                onClick={() => decide.mutate(d)}
                loading={decide.isPending && decide.variables === d}
              >
                {t[d]}
              </Button>
            ))}
        </Group>
      )}
      {author && data.state === 'checked' && <Text c="dimmed">{t.authorCannotApprove}</Text>}
      {published?.task_id && (
        <Anchor component={Link} to={`/tasks/${published.task_id}`}>
          {t.tasks}: {published.task_id}
        </Anchor>
      )}
    </>
  );
}
