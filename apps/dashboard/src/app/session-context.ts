import { createContext, useContext } from 'react';
import type { Session } from '../api/types';

export const SessionContext = createContext<Session | null>(null);

/** The session the gate resolved; every page below the gate has one. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession() is used outside <SessionGate>.');
  return session;
}

/** False in read-only mode: mutating controls are hidden, the server would answer 403 anyway. */
export function useCanMutate(): boolean {
  return !useSession().readOnly;
}
