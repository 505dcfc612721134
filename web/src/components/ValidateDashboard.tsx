import { Anchor, Button, Group } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, must } from '../api.ts';
import { useCan } from '../auth.tsx';
import { useI18n } from '../i18n.tsx';
import { ProblemAlert } from './ProblemAlert.tsx';

/** Validate one dashboard (or, without `dashboardId`, every dashboard of the environment): a task, followed on its page. */
export function ValidateButton({ envId, dashboardId }: { envId: string; dashboardId?: number }) {
  const { t } = useI18n();
  const can = useCan();
  const validate = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/environments/{env_id}/validate', {
          params: { path: { env_id: envId } },
          body: dashboardId ? { dashboard_ids: [dashboardId] } : {},
        }),
      ),
  });
  if (!can('dashboards:VALIDATE')) return null;
  return (
    <Group gap="xs" wrap="nowrap">
      <Button size="compact-sm" variant="light" onClick={() => validate.mutate()} loading={validate.isPending}>
        {t.validate}
      </Button>
      {validate.data && (
        <Anchor size="sm" component={Link} to={`/tasks/${validate.data.task_id}`} data-testid="validation-task">
          {t.validationStarted} {validate.data.task_id}
        </Anchor>
      )}
      <ProblemAlert error={validate.error} />
    </Group>
  );
}
