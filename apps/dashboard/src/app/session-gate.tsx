import { type ReactNode, useEffect } from 'react';
import { clearToken, useAuthState } from '../api/auth-token';
import { isApiError } from '../api/client';
import { useSessionQuery } from '../api/session';
import { Button } from '../components/button';
import { Notice } from '../components/notice';
import { LoginPage } from '../pages/login/login-page';
import { SessionContext } from './session-context';

const REFUSED = 'The server refused the token. Enter it again.';

/**
 * Asks GET /session first. With token auth and no token stored, the login page; a token the server
 * does not accept, or a 401 anywhere later (api/client.ts), clears it, which bumps the auth epoch,
 * asks again and brings the operator back here.
 */
export function SessionGate({ children }: { children: ReactNode }) {
  const auth = useAuthState();
  const session = useSessionQuery(auth.epoch);
  const refused = session.data?.auth === 'token' && Boolean(auth.token) && session.data.authenticated === false;

  useEffect(() => {
    if (refused) clearToken(REFUSED);
  }, [refused]);

  if (session.isPending || refused) return <Notice title="Connecting…" />;
  if (session.isError) {
    // A 401 on /session itself: the server wants credentials before telling anything.
    if (isApiError(session.error) && session.error.status === 401) return <LoginPage notice={auth.notice} />;
    return (
      <Notice title="The dashboard API does not answer" tone="error">
        <p>{session.error.message}</p>
        <Button onClick={() => session.refetch()}>Try again</Button>
      </Notice>
    );
  }
  const data = session.data;
  if (data.auth === 'token' && !auth.token) return <LoginPage notice={auth.notice} />;
  if (data.auth === 'guard' && data.authenticated === false) {
    // The application's own sign-in decides; the dashboard has no login of its own to offer.
    return (
      <Notice title="Sign in to the application first" tone="error">
        <p>This dashboard uses the application's own authentication, and this browser is not signed in.</p>
        <Button onClick={() => session.refetch()}>Try again</Button>
      </Notice>
    );
  }
  return <SessionContext.Provider value={data}>{children}</SessionContext.Provider>;
}
