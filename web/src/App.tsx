import { AppShell, Burger, Button, Group, NavLink, SegmentedControl, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { NavLink as RouterLink, Navigate, Route, Routes, useLocation } from 'react-router';
import { session } from './api.ts';
import { useCan, useMe, useToken } from './auth.tsx';
import { AssistantPanel } from './components/AssistantPanel.tsx';
import { useI18n, type Lang } from './i18n.tsx';
import { AdminPage } from './pages/Admin.tsx';
import { DashboardsPage } from './pages/Dashboards.tsx';
import { DatasetReviewPage } from './pages/DatasetReview.tsx';
import { DatasetsPage } from './pages/Datasets.tsx';
import { EnvironmentsPage } from './pages/Environments.tsx';
import { GitPage } from './pages/Git.tsx';
import { LoginPage, OidcCallback } from './pages/Login.tsx';
import { MigratePage } from './pages/Migrate.tsx';
import { OverviewPage } from './pages/Overview.tsx';
import { ReleasePage, ReleasesPage } from './pages/Releases.tsx';
import { TaskPage } from './pages/TaskPage.tsx';
import { TasksPage } from './pages/Tasks.tsx';
import { act } from './act.ts';

export function App() {
  const token = useToken();
  const location = useLocation();
  if (location.pathname === '/oidc/callback') return <OidcCallback />;
  if (!token) return <LoginPage next={location.pathname + location.search} />;
  return <Shell />;
}

function Shell() {
  const { t } = useI18n();
  const [opened, { toggle, close }] = useDisclosure();
  const links = useNavLinks();
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <ShellHeader opened={opened} toggle={toggle} />
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label={t.mainNavigation}>
        {links
          .filter(([, , shown]) => shown)
          .map(([to, label]) => (
            <NavLink key={to} component={RouterLink} to={to} label={label} end={to === '/'} onClick={close} />
          ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <PageRoutes />
      </AppShell.Main>
    </AppShell>
  );
}

/** The navigation's entries: path, label, and whether this user may see the page. */
function useNavLinks(): Array<[string, string, boolean]> {
  const { t } = useI18n();
  const me = useMe().data;
  const can = useCan();
  return [
    ['/', t.overview, true],
    ['/environments', t.environments, can('environments:READ')],
    ['/dashboards', t.dashboards, can('dashboards:READ')],
    ['/migrate', t.migrate, can('dashboards:MIGRATE')],
    ['/tasks', t.tasks, true],
    ['/releases', t.releases, can('clean_release:READ')],
    ['/git', t.git, can('git:READ')],
    ['/datasets', t.datasets, can('datasets:READ')],
    ['/dataset-review', t.datasetReview, can('dataset_review:READ')],
    ['/admin', t.admin, !!me?.roles.includes('Admin') || can('admin:settings:WRITE')],
  ];
}

function useSignOut() {
  const qc = useQueryClient();
  return async () => {
    // Forget the token first, so no request in flight reads the revoked session as "expired".
    const token = session.token;
    session.set(undefined);
    qc.clear();
    // The session is gone here already; a logout the server did not get is reported, not hidden.
    await fetch('/api/auth/logout', { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  };
}

function ShellHeader({ opened, toggle }: { opened: boolean; toggle: () => void }) {
  const { t, lang, setLang } = useI18n();
  const me = useMe().data;
  const can = useCan();
  const signOut = useSignOut();
  return (
    <Group h="100%" px="md" justify="space-between">
      <Group>
        {/* "menu" in both languages: the browser test opens it by this name in Russian too */}
        <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="menu" />
        <Title order={3} fz={{ base: 18, sm: 24 }}>
          Switchyard
        </Title>
      </Group>
      <Group gap="xs" wrap="nowrap">
        <SegmentedControl
          aria-label={t.language}
          size="xs"
          value={lang}
          onChange={(v) => setLang(v as Lang)}
          data={[
            { value: 'en', label: 'EN' },
            { value: 'ru', label: 'RU' },
          ]}
        />
        {can('assistant:USE') && <AssistantPanel />}
        <Text size="sm" data-testid="whoami" visibleFrom="sm">
          {me?.username}
        </Text>
        <Button variant="subtle" size="xs" onClick={act(signOut)}>
          {t.signOut}
        </Button>
      </Group>
    </Group>
  );
}

function PageRoutes() {
  const { t } = useI18n();
  return (
    <Routes>
      <Route path="/" element={<OverviewPage />} />
      <Route path="/environments" element={<EnvironmentsPage />} />
      <Route path="/dashboards" element={<DashboardsPage />} />
      <Route path="/migrate" element={<MigratePage />} />
      <Route path="/tasks" element={<TasksPage />} />
      <Route path="/tasks/:id" element={<TaskPage />} />
      <Route path="/releases" element={<ReleasesPage />} />
      <Route path="/releases/:id" element={<ReleasePage />} />
      <Route path="/git" element={<GitPage />} />
      <Route path="/datasets" element={<DatasetsPage />} />
      <Route path="/dataset-review" element={<DatasetReviewPage />} />
      <Route path="/admin" element={<AdminPage />} />
      <Route path="/login" element={<Navigate to="/" replace />} />
      <Route path="*" element={<Text>{t.notFound}</Text>} />
    </Routes>
  );
}
