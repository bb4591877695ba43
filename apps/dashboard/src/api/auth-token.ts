import { useSyncExternalStore } from 'react';

// The bearer token lives in sessionStorage: it survives a reload, not the tab. The key carries the
// mount path, so two dashboards on one origin (say /durable/ and /ops/durable/) keep their own.
const storageKey = `nestjs-durable.token:${new URL('./', document.baseURI).pathname}`;

export interface AuthState {
  token: string | null;
  /** Bumped on every change, so the session query refetches with the new credentials. */
  epoch: number;
  /** Why the login page is shown again, e.g. the server refused the token. */
  notice: string | null;
}

let state: AuthState = { token: readStored(), epoch: 0, notice: null };
const listeners = new Set<() => void>();

function readStored(): string | null {
  try {
    return sessionStorage.getItem(storageKey);
  } catch {
    return null; // storage disabled: the token lives for this page only
  }
}

function update(token: string | null, notice: string | null): void {
  try {
    if (token) sessionStorage.setItem(storageKey, token);
    else sessionStorage.removeItem(storageKey);
  } catch {
    // storage disabled: keep it in memory
  }
  state = { token, epoch: state.epoch + 1, notice };
  listeners.forEach((listener) => listener());
}

export function getToken(): string | null {
  return state.token;
}

export function setToken(token: string): void {
  update(token, null);
}

export function clearToken(notice: string | null = null): void {
  update(null, notice);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useAuthState(): AuthState {
  return useSyncExternalStore(subscribe, () => state);
}
