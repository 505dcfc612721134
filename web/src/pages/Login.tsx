import { Alert, Button, Center, Divider, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { sessionExpired, session } from '../api.ts';
import { useI18n } from '../i18n.tsx';
import { act } from '../act.ts';

export function LoginPage({ next }: { next: string }) {
  const { t } = useI18n();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // The server says in index.html whether single sign-on is configured.
  const oidc = document.querySelector('meta[name="switchyard-oidc"]')?.getAttribute('content') === 'on';
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      session.set(await passwordGrant(username, password));
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
        <form onSubmit={act(submit)}>
          <Stack>
            <Title order={2}>Switchyard</Title>
            {sessionExpired && <Alert color="yellow">{t.signInAgain}</Alert>}
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput
              label={t.username}
              value={username}
              onChange={(e) => setUsername(e.currentTarget.value)}
              autoComplete="username"
              required
            />
            <PasswordInput
              label={t.password}
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
              autoComplete="current-password"
              required
            />
            <Button type="submit" loading={busy}>
              {t.signIn}
            </Button>
            {oidc && <SsoButton />}
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}

/**
 * Where the identity provider sends the browser back when OIDC_REDIRECT_URI points at the console
 * (`https://<host>/oidc/callback`): the code and state go to the API's callback (the state cookie
 * travels with this same-origin request) and the answer is the session.
 */
export function OidcCallback() {
  const { t } = useI18n();
  const [error, setError] = useState<string>();
  const navigate = useNavigate();
  useEffect(() => {
    act(async () => {
      const res = await fetch(`/api/auth/oidc/callback${window.location.search}`);
      const body = await res.json();
      if (!res.ok) return setError(body.detail ?? body.title);
      session.set(body.access_token);
      await navigate('/', { replace: true });
    })();
  }, [navigate]);
  return (
    <Center mih="100vh">
      {error ? (
        <Alert color="red" role="alert" title={t.sso}>
          {error} <a href="/">{t.signIn}</a>
        </Alert>
      ) : (
        t.loading
      )}
    </Center>
  );
}

/** The password grant is a form post (OAuth 2.0 style), sent as such; answers the access token or throws the problem's detail. */
async function passwordGrant(username: string, password: string): Promise<string> {
  const res = await fetch('/api/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password }),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(body.detail ?? body.title);
  return body.access_token;
}

/** Single sign-on, offered when the server says it is configured. */
function SsoButton() {
  const { t } = useI18n();
  return (
    <>
      <Divider />
      <Button component="a" href="/api/auth/oidc/login" variant="outline">
        {t.sso}
      </Button>
    </>
  );
}
