import type { BulkFilter, RunFilter, WaitKind } from '../../api/types';
import { hrefFor } from '../../app/router';
import { parseRunSearch } from '../../lib/run-search';

/** The runs page's state, all of it in the hash (`#/runs?status=failed&workflow=order`): linkable. */
export interface RunsView {
  /** A status, several comma-separated, or 'all'. */
  status: string;
  workflow: string;
  waitingFor: string;
  signal: string;
  schedule: string;
  /** Runs of one queue (the Queues page links here). */
  queue: string;
  /** The search as typed: a run id prefix and `name:value` business keys (lib/run-search.ts). */
  q: string;
  limit: number;
  cursor: string;
  page: number;
}

export const DEFAULT_STATUS = 'waiting'; // what operators come here for
export const PAGE_SIZES = [25, 50, 100, 200];

export function readRunsView(params: URLSearchParams): RunsView {
  const limit = Number(params.get('limit'));
  const page = Number(params.get('page'));
  return {
    status: params.get('status') || DEFAULT_STATUS,
    workflow: params.get('workflow') ?? '',
    waitingFor: params.get('waitingFor') ?? '',
    signal: params.get('signal') ?? '',
    schedule: params.get('schedule') ?? '',
    queue: params.get('queue') ?? '',
    q: params.get('q') ?? '',
    limit: PAGE_SIZES.includes(limit) ? limit : 50,
    cursor: params.get('cursor') ?? '',
    page: Number.isInteger(page) && page > 1 ? page : 1,
  };
}

export function toRunFilter(view: RunsView): RunFilter {
  return {
    ...toBulkFilter(view),
    q: parseRunSearch(view.q).idPrefix || undefined,
    limit: view.limit,
    cursor: view.cursor || undefined,
  };
}

/** Every run the view matches, whatever the page; a bulk action by filter takes no id prefix. */
export function toBulkFilter(view: RunsView): BulkFilter {
  const { keys } = parseRunSearch(view.q);
  return {
    // "Waiting for" implies the status (waiting; pending for a queue's slot).
    status: view.status === 'all' || view.waitingFor ? undefined : view.status,
    workflow: view.workflow || undefined,
    waitingFor: (view.waitingFor || undefined) as WaitKind | undefined,
    signal: view.signal || undefined,
    schedule: view.schedule || undefined,
    queue: view.queue || undefined,
    keys: Object.keys(keys).length ? keys : undefined,
  };
}

export function runsHref(view: RunsView): string {
  return hrefFor('/runs', {
    status: view.status === DEFAULT_STATUS ? undefined : view.status,
    workflow: view.workflow,
    waitingFor: view.waitingFor,
    signal: view.signal,
    schedule: view.schedule,
    queue: view.queue,
    q: view.q,
    limit: view.limit === 50 ? undefined : String(view.limit),
    cursor: view.cursor,
    page: view.page > 1 ? String(view.page) : undefined,
  });
}

/** A filter change starts again from the first page. */
export function withFilter(view: RunsView, change: Partial<RunsView>): RunsView {
  return { ...view, ...change, cursor: '', page: 1 };
}
