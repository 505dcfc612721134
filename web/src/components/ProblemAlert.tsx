import { Alert } from '@mantine/core';
import { ApiError } from '../api.ts';
import { useI18n } from '../i18n.tsx';

/** A failed request in words: a 403 says which permission is missing instead of leaving a blank page. */
export function ProblemAlert({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (!error) return null;
  if (error instanceof ApiError) {
    const p = error.problem;
    const title = p.status === 403 ? t.forbidden : p.status === 404 ? t.notFound : `${p.status} ${p.title}`;
    return (
      <Alert color={p.status >= 500 ? 'red' : 'orange'} title={title} role="alert">
        {p.detail ?? p.title}
      </Alert>
    );
  }
  return (
    <Alert color="red" role="alert">
      {String((error as Error).message ?? error)}
    </Alert>
  );
}
