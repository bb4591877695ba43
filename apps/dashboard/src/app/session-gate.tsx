import type { ReactNode } from 'react';
import { useAuthState } from '../api/auth-token';
import { isApiError } from '../api/client';
import { useSessionQuery } from '../api/session';
import { Button } from '../components/button';
import { Notice } from '../components/notice';
import { LoginPage } from '../pages/login/login-page';
import { SessionContext } from './session-context';

/**
 * Asks GET /session first. With token auth and no token stored, the login page; a 401 anywhere
 * clears the token (api/client.ts), which bumps the auth epoch and brings the operator back here.
 */
export function SessionGate({ children }: { children: ReactNode }) {
  const auth = useAuthState();
  const session = useSessionQuery(auth.epoch);

  if (session.isPending) return <Notice title="Connecting…" />;
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
  if (session.data.auth === 'token' && !auth.token) return <LoginPage notice={auth.notice} />;
  return <SessionContext.Provider value={session.data}>{children}</SessionContext.Provider>;
}
