import { useSyncExternalStore } from 'react';
import { storageKey } from '../lib/storage-key';

// The bearer token lives in sessionStorage: it survives a reload, not the tab.
const tokenKey = storageKey('token');

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
    return sessionStorage.getItem(tokenKey);
  } catch {
    return null; // storage disabled: the token lives for this page only
  }
}

function update(token: string | null, notice: string | null): void {
  try {
    if (token) sessionStorage.setItem(tokenKey, token);
    else sessionStorage.removeItem(tokenKey);
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

// The operator's name lives in localStorage: it is no secret, and the next sign-in offers it again.
const operatorKey = storageKey('operator');

/** The name the operator gave at sign-in, sent with each request so that the history says who acted. */
export function getOperator(): string | null {
  try {
    return localStorage.getItem(operatorKey);
  } catch {
    return null;
  }
}

export function setOperator(name: string): void {
  try {
    if (name) localStorage.setItem(operatorKey, name);
    else localStorage.removeItem(operatorKey);
  } catch {
    // storage disabled: requests go without a name
  }
}

export function useAuthState(): AuthState {
  return useSyncExternalStore(subscribe, () => state);
}
