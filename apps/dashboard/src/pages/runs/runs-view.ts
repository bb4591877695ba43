import type { RunQuery } from '../../api/runs';
import type { BulkFilter, RunSort, WaitKind } from '../../api/types';
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
  /** The forks of one run (a run's page links here). */
  forkedFrom: string;
  /** The search as typed: a run id prefix and `name:value` business keys (lib/run-search.ts). */
  q: string;
  /** Which time the range applies to: creation or last change. */
  time: RunSort;
  /** A preset ending now, `custom` (from `from` to `to`), or '' for any time. */
  range: RangeId | 'custom' | '';
  /** The custom range's ends, ISO instants; either may be '' (open). In the URL as the API's `createdAfter`… */
  from: string;
  to: string;
  sort: RunSort;
  order: 'desc' | 'asc';
  limit: number;
  cursor: string;
  page: number;
}

export const DEFAULT_STATUS = 'waiting'; // what operators come here for
export const PAGE_SIZES = [25, 50, 100, 200];

/** The time range presets, each ending now; kept relative in the URL, so a reload means the last hour again. */
export const RANGE_PRESETS = [
  { id: '15m', label: 'last 15 minutes', ms: 15 * 60_000 },
  { id: '1h', label: 'last hour', ms: 60 * 60_000 },
  { id: '24h', label: 'last day', ms: 24 * 60 * 60_000 },
  { id: '7d', label: 'last 7 days', ms: 7 * 24 * 60 * 60_000 },
] as const;
export type RangeId = (typeof RANGE_PRESETS)[number]['id'];

/**
 * The hash's parameters as a view. A custom range is written as the API's own bounds
 * (`createdAfter=…&createdBefore=…`, or `updatedAfter`…), so a link built for the API (the overview's
 * charts) opens the list on that range; with bounds on both times, those of the creation win.
 */
export function readRunsView(params: URLSearchParams): RunsView {
  const limit = Number(params.get('limit'));
  const page = Number(params.get('page'));
  const preset = RANGE_PRESETS.find((p) => p.id === params.get('range'))?.id;
  const bounded = (['created', 'updated'] as const).find(
    (time) => instant(params.get(`${time}After`)) || instant(params.get(`${time}Before`)),
  );
  const time = !preset && bounded ? bounded : params.get('time') === 'updated' ? 'updated' : 'created';
  return {
    status: params.get('status') || DEFAULT_STATUS,
    workflow: params.get('workflow') ?? '',
    waitingFor: params.get('waitingFor') ?? '',
    signal: params.get('signal') ?? '',
    schedule: params.get('schedule') ?? '',
    queue: params.get('queue') ?? '',
    forkedFrom: params.get('forkedFrom') ?? '',
    q: params.get('q') ?? '',
    time,
    range: preset ?? (bounded ? 'custom' : ''),
    from: preset ? '' : instant(params.get(`${time}After`)),
    to: preset ? '' : instant(params.get(`${time}Before`)),
    sort: params.get('sort') === 'updated' ? 'updated' : 'created',
    order: params.get('order') === 'asc' ? 'asc' : 'desc',
    limit: PAGE_SIZES.includes(limit) ? limit : 50,
    cursor: params.get('cursor') ?? '',
    page: Number.isInteger(page) && page > 1 ? page : 1,
  };
}

/** An ISO instant from the URL, or '' when absent or unreadable. */
function instant(value: string | null): string {
  return value && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : '';
}

/** The list's query: a preset range stays relative, resolved at each fetch (api/runs.ts). */
export function toRunQuery(view: RunsView): RunQuery {
  const preset = RANGE_PRESETS.find((p) => p.id === view.range);
  return {
    ...withoutTime(view),
    ...customRange(view),
    ...(preset && { recent: { field: view.time, ms: preset.ms } }),
    q: parseRunSearch(view.q).idPrefix || undefined,
    sort: view.sort === 'created' ? undefined : view.sort,
    order: view.order === 'desc' ? undefined : view.order,
    limit: view.limit,
    cursor: view.cursor || undefined,
  };
}

/**
 * Every run the view matches, whatever the page, with a preset range fixed at `now`: what a bulk
 * action by filter sends, and what its dialog counts. A bulk filter takes no id prefix.
 */
export function toBulkFilter(view: RunsView, now: number): BulkFilter {
  const preset = RANGE_PRESETS.find((p) => p.id === view.range);
  return {
    ...withoutTime(view),
    ...customRange(view),
    ...(preset && { [`${view.time}After`]: new Date(now - preset.ms).toISOString() }),
  };
}

function withoutTime(view: RunsView): BulkFilter {
  const { keys } = parseRunSearch(view.q);
  return {
    // "Waiting for" implies the status (waiting; pending for a queue's slot).
    status: view.status === 'all' || view.waitingFor ? undefined : view.status,
    workflow: view.workflow || undefined,
    waitingFor: (view.waitingFor || undefined) as WaitKind | undefined,
    signal: view.signal || undefined,
    schedule: view.schedule || undefined,
    queue: view.queue || undefined,
    forkedFrom: view.forkedFrom || undefined,
    keys: Object.keys(keys).length ? keys : undefined,
  };
}

function customRange(view: RunsView): BulkFilter {
  if (view.range !== 'custom') return {};
  return { [`${view.time}After`]: view.from || undefined, [`${view.time}Before`]: view.to || undefined };
}

/** Whether the view names business keys, which a delivery by filter can target. */
export function searchedKeys(view: RunsView) {
  const { keys } = parseRunSearch(view.q);
  return Object.keys(keys).length ? keys : undefined;
}

export function runsHref(view: RunsView): string {
  return hrefFor('/runs', {
    status: view.status === DEFAULT_STATUS ? undefined : view.status,
    workflow: view.workflow,
    waitingFor: view.waitingFor,
    signal: view.signal,
    schedule: view.schedule,
    queue: view.queue,
    forkedFrom: view.forkedFrom,
    q: view.q,
    time: view.range !== 'custom' && view.time === 'updated' ? view.time : undefined,
    range: view.range === 'custom' ? undefined : view.range,
    [`${view.time}After`]: view.range === 'custom' ? view.from : undefined,
    [`${view.time}Before`]: view.range === 'custom' ? view.to : undefined,
    sort: view.sort === 'created' ? undefined : view.sort,
    order: view.order === 'desc' ? undefined : view.order,
    limit: view.limit === 50 ? undefined : String(view.limit),
    cursor: view.cursor,
    page: view.page > 1 ? String(view.page) : undefined,
  });
}

/** A filter change starts again from the first page. */
export function withFilter(view: RunsView, change: Partial<RunsView>): RunsView {
  return { ...view, ...change, cursor: '', page: 1 };
}

/** "newest first", "least recently changed first"… */
export function describeOrder(view: Pick<RunsView, 'sort' | 'order'>): string {
  if (view.sort === 'updated') return view.order === 'desc' ? 'last changed first' : 'least recently changed first';
  return view.order === 'desc' ? 'newest first' : 'oldest first';
}
