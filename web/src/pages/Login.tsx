import { Alert, Button, Center, Divider, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { sessionExpired, session } from '../api.ts';
import { useI18n } from '../i18n.tsx';

export function LoginPage({ next }: { next: string }) {
  const { t } = useI18n();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // The OIDC button only when single sign-on is configured: its login route then redirects (302).
  const oidc = useQuery({
    queryKey: ['oidc-configured'],
    queryFn: async () => (await fetch('/api/auth/oidc/login', { redirect: 'manual' })).type === 'opaqueredirect',
  });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      // The password grant is a form post (OAuth 2.0 style), sent as such.
      const res = await fetch('/api/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username, password }),
      });
      const body = await res.json();
      if (!res.ok) throw new Error(body.detail ?? body.title);
      session.set(body.access_token);
      window.history.replaceState(null, '', next === '/login' ? '/' : next);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" w={380} maw="100%">
        <form onSubmit={submit}>
          <Stack>
            <Title order={2}>Switchyard</Title>
            {sessionExpired && <Alert color="yellow">{t.signInAgain}</Alert>}
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput label={t.username} value={username} onChange={(e) => setUsername(e.currentTarget.value)} autoComplete="username" required />
            <PasswordInput label={t.password} value={password} onChange={(e) => setPassword(e.currentTarget.value)} autoComplete="current-password" required />
            <Button type="submit" loading={busy}>
              {t.signIn}
            </Button>
            {oidc.data && (
              <>
                <Divider />
                <Button component="a" href="/api/auth/oidc/login" variant="outline">
                  {t.sso}
                </Button>
              </>
            )}
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
