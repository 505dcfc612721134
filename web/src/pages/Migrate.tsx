import { Alert, Button, Group, Loader, MultiSelect, Stack, Stepper, Switch, Table, Text, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, must } from '../api.ts';
import type { CompanionRequest } from '../../../contracts/companions.ts';
import { EnvSelect } from '../components/EnvSelect.tsx';
import { companionsBody, MigrationOptions } from '../components/MigrationOptions.tsx';
import { ProblemAlert } from '../components/ProblemAlert.tsx';
import { TaskItemList } from '../components/TaskItemList.tsx';
import { TaskSummary } from '../components/TaskSummary.tsx';
import { FINISHED, useTask } from '../components/tasks.ts';
import { useI18n } from '../i18n.tsx';

type Task = ReturnType<typeof useTask>;

/** Pick → review the mapping → dry run with the per-object diff → migrate (and follow the task). */
export function MigratePage() {
  const { t } = useI18n();
  const [params] = useSearchParams();
  const [step, setStep] = useState(0);
  const [source, setSource] = useState<string | null>(params.get('source'));
  const [target, setTarget] = useState<string | null>(params.get('target'));
  const [ids, setIds] = useState<string[]>(params.get('ids')?.split(',').filter(Boolean) ?? []);
  const [overwrite, setOverwrite] = useState(true);
  const [companions, setCompanions] = useState<CompanionRequest>({});
  const { dryTask, realTask, started } = useMigrationRuns(setStep);
  const mappings = useDbMappings(source, target, step >= 1);
  const start = useStartMigration({ source, target, ids, overwrite, companions }, started);
  const dry = useTask(dryTask);
  const real = useTask(realTask);
  return (
    <Stack>
      <Title order={2}>{t.migrate}</Title>
      <Stepper active={step} onStepClick={(s) => s < step && setStep(s)}>
        <Stepper.Step label={t.pickDashboards}>
          <Stack>
            <Group>
              <EnvSelect label={t.source} value={source} onChange={setSource} />
              <EnvSelect label={t.target} value={target} onChange={setTarget} exclude={source} />
            </Group>
            <DashboardPicker source={source} ids={ids} onChange={setIds} />
            <Switch label={t.overwriteExisting} checked={overwrite} onChange={(e) => setOverwrite(e.currentTarget.checked)} />
            <Group>
              <Button disabled={!source || !target || ids.length === 0} onClick={() => setStep(1)}>
                {t.next}
              </Button>
            </Group>
          </Stack>
        </Stepper.Step>
        <Stepper.Step label={t.mappings}>
          <MappingStep
            mappings={mappings}
            options={source && target ? { source, target, value: companions, onChange: setCompanions } : undefined}
            start={start}
            onBack={() => setStep(0)}
          />
        </Stepper.Step>
        <Stepper.Step label={t.review}>
          <DryRunReview
            dryTask={dryTask}
            dry={dry}
            onBack={() => setStep(1)}
            onMigrate={() => start.mutate(false)}
            starting={start.isPending}
          />
        </Stepper.Step>
        <Stepper.Completed>{realTask && <MigrationStarted taskId={realTask} task={real} />}</Stepper.Completed>
      </Stepper>
    </Stack>
  );
}

/** The dry run's and the real migration's tasks; each, once started, moves the stepper to the step that shows it. */
function useMigrationRuns(setStep: (step: number) => void) {
  const [dryTask, setDryTask] = useState<string>();
  const [realTask, setRealTask] = useState<string>();
  const started = (taskId: string, dryRun: boolean) => {
    if (dryRun) {
      setDryTask(taskId);
      setStep(2);
    } else {
      setRealTask(taskId);
      setStep(3);
    }
  };
  return { dryTask, realTask, started };
}

interface MigrationRequest {
  source: string | null;
  target: string | null;
  ids: string[];
  overwrite: boolean;
  companions: CompanionRequest;
}

/** Starts the migration (a dry run or the real one) and hands over its task. */
function useStartMigration(r: MigrationRequest, onStarted: (taskId: string, dryRun: boolean) => void) {
  return useMutation({
    mutationFn: (dryRun: boolean) =>
      must(
        api.POST('/api/dashboards/migrate', {
          body: {
            source_env_id: r.source!,
            target_env_id: r.target!,
            dashboard_ids: r.ids.map(Number),
            overwrite: r.overwrite,
            dry_run: dryRun,
            companions: companionsBody(r.companions),
          },
        }),
      ),
    onSuccess: (res, dryRun) => onStarted(res.task_id, dryRun),
  });
}

/** The mapping step: the database mappings the migration will use, the companion options, and the dry run. */
function MappingStep({
  mappings,
  options,
  start,
  onBack,
}: {
  mappings: ReturnType<typeof useDbMappings>;
  /** Absent until both environments are picked. */
  options: Parameters<typeof MigrationOptions>[0] | undefined;
  start: ReturnType<typeof useStartMigration>;
  onBack: () => void;
}) {
  const { t } = useI18n();
  return (
    <Stack>
      <ProblemAlert error={mappings.error} />
      {mappings.isLoading && <Loader size="sm" />}
      <MappingTable items={mappings.data?.items ?? []} />
      {options && <MigrationOptions {...options} />}
      <ProblemAlert error={start.error} />
      <Group>
        <Button variant="default" onClick={onBack}>
          {t.previous}
        </Button>
        <Button onClick={() => start.mutate(true)} loading={start.isPending}>
          {t.dryRun}
        </Button>
      </Group>
    </Stack>
  );
}

/** The migration has started: its status as it goes, and the way to its task page. */
function MigrationStarted({ taskId, task }: { taskId: string; task: Task }) {
  const { t } = useI18n();
  return (
    <Stack>
      <Alert
        color={task.data?.status === 'SUCCEEDED' ? 'green' : task.data?.status === 'FAILED' ? 'red' : 'blue'}
        data-testid="migration-status"
      >
        {task.data?.status ?? 'PENDING'} · {task.data?.summary}
      </Alert>
      <Button component={Link} to={`/tasks/${taskId}`} variant="light">
        {t.liveLogs}
      </Button>
    </Stack>
  );
}

/**
 * The dashboards to migrate. The picker searches on the server (a large instance is never loaded
 * whole) and remembers the titles of what was picked, so a pick stays labelled when the search moves on.
 */
function DashboardPicker({ source, ids, onChange }: { source: string | null; ids: string[]; onChange: (ids: string[]) => void }) {
  const { t } = useI18n();
  const [pickSearch, setPickSearch] = useState('');
  const [q] = useDebouncedValue(pickSearch, 300);
  const [titles, setTitles] = useState<Record<string, string>>(() => Object.fromEntries(ids.map((id) => [id, `#${id}`])));
  const dashboards = useQuery({
    queryKey: ['dashboards-pick', source, q],
    enabled: !!source,
    placeholderData: keepPreviousData,
    queryFn: () =>
      must(
        api.GET('/api/dashboards', {
          params: { query: { env_id: source!, page_size: 50, page_context: 'other', ...(q ? { search: q } : {}) } },
        }),
      ),
  });
  const options = new Map(Object.entries(titles));
  for (const d of dashboards.data?.items ?? []) options.set(String(d.id), d.title);
  return (
    <MultiSelect
      label={t.dashboards}
      data={[...options].map(([value, label]) => ({ value, label }))}
      value={ids}
      onChange={(v) => {
        onChange(v);
        setTitles(Object.fromEntries(v.map((id) => [id, options.get(id) ?? `#${id}`])));
      }}
      searchable
      searchValue={pickSearch}
      onSearchChange={setPickSearch}
      filter={({ options: o }) => o}
      maw={700}
    />
  );
}

/** How the source's databases map to the target's, read once the pick is made. */
function useDbMappings(source: string | null, target: string | null, picked: boolean) {
  return useQuery({
    queryKey: ['db-mappings', source, target],
    enabled: !!source && !!target && picked,
    queryFn: () => must(api.GET('/api/dashboards/db-mappings', { params: { query: { source_env_id: source!, target_env_id: target! } } })),
  });
}
type MappingRow = NonNullable<ReturnType<typeof useDbMappings>['data']>['items'][number];

/** Each source database and the target one it maps to, or why it does not yet. */
function MappingTable({ items }: { items: MappingRow[] }) {
  const { t } = useI18n();
  return (
    <Table aria-label={t.mappings}>
      <Table.Tbody>
        {items.map((m) => (
          <Table.Tr key={m.source_database.id}>
            <Table.Td>{m.source_database.name}</Table.Td>
            <Table.Td>→</Table.Td>
            <Table.Td>
              {m.saved_target ? (
                m.saved_target.name
              ) : (
                <Text c="orange">
                  {t.notMapped}
                  {m.suggested_target ? t.suggestedTarget(m.suggested_target.name, Math.round(m.confidence * 100)) : ''} —{' '}
                  <Link to="/environments">{t.mappings}</Link>
                </Text>
              )}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** The dry run followed to its end, its per-object diff, and the real migration once it succeeded. */
function DryRunReview(props: { dryTask: string | undefined; dry: Task; onBack: () => void; onMigrate: () => void; starting: boolean }) {
  const { t } = useI18n();
  const { dryTask, dry, onBack, onMigrate, starting } = props;
  return (
    <Stack>
      {dry.data && !FINISHED.includes(dry.data.status) && (
        <Group>
          <Loader size="sm" /> <Text>{dry.data.progress?.message ?? dry.data.status}</Text>
        </Group>
      )}
      {dryTask && (
        <Text size="sm">
          <Link to={`/tasks/${dryTask}`}>{dryTask}</Link>
        </Text>
      )}
      {/* The task page's summary and list: a dry run of hundreds of dashboards stays a page a person can read. */}
      {dryTask && dry.data?.items_summary && (
        <>
          <TaskSummary summary={dry.data.items_summary} />
          <TaskItemList taskId={dryTask} type="migration" total={dry.data.items_summary.total} status={dry.data.status} />
        </>
      )}
      {dry.data && FINISHED.includes(dry.data.status) && (
        <Group>
          <Button variant="default" onClick={onBack}>
            {t.previous}
          </Button>
          <Button color="green" onClick={onMigrate} loading={starting} disabled={dry.data.status !== 'SUCCEEDED'}>
            {t.runMigration}
          </Button>
        </Group>
      )}
    </Stack>
  );
}
