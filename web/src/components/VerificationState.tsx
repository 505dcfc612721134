import { Badge, Group, Text } from '@mantine/core';
import type { DashboardOutcome, VerificationState as State } from '../../../contracts/migration.ts';
import { useI18n } from '../i18n.tsx';

const COLOR: Record<State['state'], string> = { verified: 'green', carried: 'blue', not_verified: 'gray' };

/**
 * Whether this task verified the dashboard (when, and what: what it imported, or the target of an
 * unchanged one), carried an earlier task's verification (whose, when, and why it was not made
 * again), or did not verify it (why): a rerun says what it checked (docs/migrating-dashboards.md,
 * Verification state). Results from before the state show nothing here.
 */
export function VerificationState({ item }: { item: Pick<DashboardOutcome, 'verification_state'> }) {
  const { t } = useI18n();
  const s = item.verification_state;
  if (!s) return null;
  const label = s.state === 'verified' ? t.stateVerified : s.state === 'carried' ? t.stateCarried : t.stateNotVerified;
  const when = (at: string | null) => (at ? new Date(at).toLocaleString() : '—');
  const detail =
    s.state === 'verified'
      ? t.verifiedAt(when(s.at), s.checked === 'unchanged_target')
      : s.state === 'carried'
        ? `${t.carriedFrom(s.from_task_id ?? '?', when(s.at))}: ${s.reason}`
        : s.reason;
  return (
    <Group gap="xs" data-testid="verification-state" data-state={s.state}>
      <Badge color={COLOR[s.state]} variant="light">
        {label}
      </Badge>
      <Text size="sm">{detail}</Text>
    </Group>
  );
}
