import { useMemo, useSyncExternalStore } from 'react';
import { keyTerm } from '../lib/run-search';

// Hash routing (`#/runs?status=waiting`): the server serves one index.html and needs no fallback
// route, whatever path the module is mounted under. Filters and tabs live in the hash's query, so
// a view can be linked and the back button works.

export interface HashLocation {
  path: string;
  params: URLSearchParams;
}

export type Params = Record<string, string | undefined>;

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

function parseHash(hash: string): HashLocation {
  const raw = hash.replace(/^#/, '') || '/';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  return {
    path: path.startsWith('/') ? path : `/${path}`,
    params: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)),
  };
}

export function useHashLocation(): HashLocation {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return useMemo(() => parseHash(hash), [hash]);
}

/** `#/path?k=v`, leaving out empty params. */
export function hrefFor(path: string, params: Params = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const query = search.toString();
  return `#${path}${query ? `?${query}` : ''}`;
}

export function runHref(runId: string, params?: Params): string {
  return hrefFor(`/runs/${encodeURIComponent(runId)}`, params);
}

export function scheduleHref(name: string): string {
  return hrefFor(`/schedules/${encodeURIComponent(name)}`);
}

/** The runs a schedule started, whatever their status. */
export function scheduleRunsHref(name: string): string {
  return hrefFor('/runs', { status: 'all', schedule: name });
}

/** The runs having this business key, whatever their status. */
export function keyRunsHref(name: string, value: string): string {
  return hrefFor('/runs', { status: 'all', q: keyTerm(name, value) });
}

/** `replace` for changes that should not each become a history entry (typing in a filter, tabs). */
export function navigate(href: string, { replace = false } = {}): void {
  if (!replace) {
    window.location.hash = href;
    return;
  }
  window.history.replaceState(window.history.state, '', href);
  window.dispatchEvent(new HashChangeEvent('hashchange')); // replaceState does not fire it
}

export type Route =
  | { page: 'overview' }
  | { page: 'runs' }
  | { page: 'run'; runId: string }
  | { page: 'workflows' }
  | { page: 'schedules' }
  | { page: 'schedule'; name: string }
  | { page: 'queues' }
  | { page: 'not-found' };

export function matchRoute(path: string): Route {
  if (path === '/' || path === '') return { page: 'overview' };
  if (path === '/runs' || path === '/runs/') return { page: 'runs' };
  if (path === '/workflows') return { page: 'workflows' };
  if (path === '/schedules' || path === '/schedules/') return { page: 'schedules' };
  if (path === '/queues' || path === '/queues/') return { page: 'queues' };
  const run = /^\/runs\/(.+)$/.exec(path);
  if (run) return withDecoded(run[1], (runId) => ({ page: 'run', runId }));
  const schedule = /^\/schedules\/(.+)$/.exec(path);
  if (schedule) return withDecoded(schedule[1], (name) => ({ page: 'schedule', name }));
  return { page: 'not-found' };
}

function withDecoded(segment: string, route: (decoded: string) => Route): Route {
  try {
    return route(decodeURIComponent(segment));
  } catch {
    return { page: 'not-found' }; // a malformed %-escape
  }
}
