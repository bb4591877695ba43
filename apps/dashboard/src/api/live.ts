import type { Query, QueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { type SseEvent, SseParser } from '../lib/sse';
import { apiStream, isApiError } from './client';
import { type SharedStreamState, StreamShare } from './live-share';
import { queryKeys } from './query-keys';

// Live updates: while the dashboard is open it listens to GET /api/events (server-sent events, read
// with fetch so that the Authorization header goes along) and, when runs change, refreshes the queries
// that show them: the runs lists, the stats, and the page of a run that changed. Those poll only while the
// stream is down (`useLiveRefresh`); what changes with no run event (queues, schedules, journal, charts) polls
// on its own interval either way. A pause holds both.
// Tabs of one dashboard share one stream where the browser allows it (live-share.ts).

/** The queries that poll on their own intervals (useLiveRefresh's `whileDown` and `whileLive` both given): a pause holds them too. */
const HELD_BY_PAUSE = [queryKeys.schedules.all, queryKeys.queues, queryKeys.journal, [...queryKeys.stats, 'activity']];

/** How often the runs, a run and the stats refresh themselves while the stream is down. */
export const FALLBACK_POLL_MS = 2_000;
/** The server pings every 15 s; a stream silent for this long is taken as dead and opened again. */
const SILENCE_MS = 40_000;
/** The waits between tries to open the stream again: doubling from the first, up to the last. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/** `connecting` until the server says `ready`; `down` while the stream fails (the pages poll then). */
export type LiveMode = 'connecting' | 'live' | 'down';

export interface LiveState {
  mode: LiveMode;
  /** The operator stopped the updates: nothing refreshes by itself until resumed. */
  paused: boolean;
  /** How many runs changed while paused: what resuming catches up on. */
  changedWhilePaused: number;
  /** Why the stream is down: "the server cannot be reached", "403 READ_ONLY"… */
  problem?: string;
  /** When the next try to open the stream starts (this browser's clock); absent while one is under way. */
  retryAt?: number;
  /** When data of the runs or the stats last arrived (this browser's clock). */
  updatedAt?: number;
}

let state: LiveState = { mode: 'connecting', paused: false, changedWhilePaused: 0 };
const listeners = new Set<() => void>();

function update(change: Partial<LiveState>): void {
  state = { ...state, ...change };
  listeners.forEach((listener) => listener());
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The live updates' state, for the top bar. */
export function useLiveState(): LiveState {
  return useSyncExternalStore(subscribe, () => state);
}

/**
 * How a query refreshes by itself: every `whileLive` ms while the stream is live (default never: the stream
 * says when), every `whileDown` ms otherwise (the fallback, and the first moments before the stream is
 * ready); paused, neither by time nor on the window's focus. What changes with no run event to say so (a
 * schedule's next slots, a queue's load, the journal's days, the charts) passes its own interval for both.
 */
export function useLiveRefresh(
  whileLive: number | false = false,
  whileDown: number = FALLBACK_POLL_MS,
): { refetchInterval: number | false; refetchOnWindowFocus: boolean } {
  const how = useSyncExternalStore(subscribe, () => (state.paused ? 'paused' : state.mode === 'live' ? 'live' : 'poll'));
  return {
    refetchInterval: how === 'poll' ? whileDown : how === 'live' ? whileLive : false,
    refetchOnWindowFocus: how !== 'paused',
  };
}

/** What a change of these runs makes stale: `all` after a gap in the stream (opened, resumed). */
type Changed = ReadonlySet<string> | 'all';

/** The stream and what it refreshes; one per page, started by the app shell once signed in. */
class LiveFeed {
  private client: QueryClient | undefined;
  /** The stream shared with this dashboard's other tabs: read here only while this tab leads. */
  private share: StreamShare | undefined;
  private stopCache: (() => void) | undefined;
  private abort: AbortController | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private silenceTimer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  /** Runs reported while paused. */
  private missed = new Set<string>();
  /** Changes not refreshed yet, and whether a refresh is under way: one at a time, then the next. */
  private pending: Set<string> | 'all' = new Set();
  private refreshing = false;

  start(client: QueryClient): () => void {
    this.client = client;
    this.stopCache = client.getQueryCache().subscribe((event) => {
      if (event.type === 'updated' && event.action.type === 'success' && showsRuns(event.query)) {
        update({ updatedAt: event.query.state.dataUpdatedAt });
      }
    });
    update({ mode: 'connecting', paused: false, changedWhilePaused: 0, problem: undefined, retryAt: undefined });
    if (!StreamShare.available()) void this.connect();
    else
      this.share = new StreamShare({
        lead: () => this.lead(),
        event: (event) => this.onEvent(event),
        state: (shared) => this.follow(shared),
        retry: () => this.retryNow(),
        current: streamStateNow,
      });
    return () => this.stop();
  }

  stop(): void {
    this.client = undefined;
    this.share?.close();
    this.share = undefined;
    this.stopCache?.();
    this.abort?.abort();
    this.abort = undefined;
    clearTimeout(this.retryTimer);
    clearTimeout(this.silenceTimer);
    this.failures = 0;
    this.pending = new Set();
  }

  pause(): void {
    this.missed.clear();
    update({ paused: true, changedWhilePaused: 0 });
  }

  /** Back to live (or to the fallback's polling), refreshing what the pause held: it may have changed meanwhile. */
  resume(): void {
    this.missed.clear();
    update({ paused: false, changedWhilePaused: 0 });
    this.changed('all');
    // What the pause held beyond the runs (their own polls would catch up only at their next tick: 30 s for the journal).
    for (const queryKey of HELD_BY_PAUSE) void this.client?.invalidateQueries({ queryKey });
  }

  /** Tries the stream again now rather than at the end of the backoff. */
  retryNow(): void {
    if (state.mode !== 'down' || !this.client) return;
    if (this.share && !this.share.leading) this.share.requestRetry();
    else void this.connect();
  }

  private async connect(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    this.streamState({ retryAt: undefined });
    try {
      const response = await apiStream('/events', abort.signal);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser((event) => {
        this.share?.shareEvent(event); // before this tab's own handling: a `ready` reaches the others before the state it makes
        this.onEvent(event);
      });
      for (;;) {
        this.expectWithin(abort);
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
      }
      throw new Error('the server closed the stream');
    } catch (error) {
      if (this.abort !== abort) return; // stopped, or replaced by a newer try
      this.fail(abort.signal.aborted ? 'the stream went silent' : describe(error));
    } finally {
      clearTimeout(this.silenceTimer);
    }
  }

  private expectWithin(abort: AbortController): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => abort.abort(), SILENCE_MS);
  }

  private fail(problem: string): void {
    this.abort = undefined;
    // A 401 signed the operator out (api/client.ts): the shell unmounts and stops the feed.
    if (!this.client) return;
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** this.failures) * (0.8 + Math.random() * 0.4);
    this.failures++;
    this.streamState({ mode: 'down', problem, retryAt: Date.now() + delay });
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private onEvent(event: SseEvent): void {
    if (event.type === 'ready') {
      this.failures = 0;
      this.streamState({ mode: 'live', problem: undefined, retryAt: undefined });
      // What changed before the stream was ready (since the page loaded, or while it was down).
      if (!state.paused) this.changed('all');
    } else if (event.type === 'runs') {
      const runIds = readRunIds(event.data);
      if (!state.paused) this.changed(new Set(runIds));
      else {
        for (const runId of runIds) this.missed.add(runId);
        update({ changedWhilePaused: this.missed.size });
      }
    }
  }

  /** This tab takes over reading the stream for the others (the tab that read it closed): connecting, until `ready`. */
  private lead(): void {
    if (!this.client) return;
    this.streamState({ mode: 'connecting', problem: undefined, retryAt: undefined });
    void this.connect();
  }

  /** The stream's state changed in this tab: shown here, and told to the other tabs when this tab reads it for them. */
  private streamState(change: Partial<SharedStreamState>): void {
    update(change);
    this.share?.shareState(streamStateNow());
  }

  /** The stream's state in the tab that reads it for this one; becoming live, this tab refreshes what it shows, as on `ready`. */
  private follow(shared: SharedStreamState): void {
    const wasLive = state.mode === 'live';
    update({ mode: shared.mode, problem: shared.problem, retryAt: shared.retryAt });
    if (shared.mode === 'live' && !wasLive && !state.paused) this.changed('all');
  }

  private changed(runIds: Changed): void {
    if (runIds === 'all' || this.pending === 'all') this.pending = 'all';
    else for (const runId of runIds) this.pending.add(runId);
    void this.refresh();
  }

  /**
   * Refreshes what the pending changes touch and waits for the answers; changes that arrive meanwhile
   * wait for the next round, so a busy system gets one round trip at a time, not a cancelled one per event.
   */
  private async refresh(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      while (this.client && (this.pending === 'all' || this.pending.size)) {
        const changed = this.pending;
        this.pending = new Set();
        await invalidate(this.client, changed);
      }
    } finally {
      this.refreshing = false;
    }
  }
}

/** The stream's part of this tab's state, as the other tabs show it. */
function streamStateNow(): SharedStreamState {
  return { mode: state.mode, problem: state.problem, retryAt: state.retryAt };
}

const feed = new LiveFeed();

/** Starts the live updates for this page; the returned function stops them. */
export function startLiveUpdates(client: QueryClient): () => void {
  return feed.start(client);
}

export const pauseLiveUpdates = () => feed.pause();
export const resumeLiveUpdates = () => feed.resume();
export const retryLiveUpdates = () => feed.retryNow();

/** The lists (any of them may gain or lose a run), the stats, and the pages of the runs that changed or of their parents. */
function invalidate(client: QueryClient, changed: Changed): Promise<unknown> {
  return Promise.all([
    client.invalidateQueries({ queryKey: queryKeys.runs.lists }),
    client.invalidateQueries({ queryKey: queryKeys.stats, exact: true }),
    client.invalidateQueries({
      queryKey: queryKeys.runs.details,
      predicate: ({ queryKey }) => changed === 'all' || concerns(String(queryKey[queryKeys.runs.details.length]), changed),
    }),
  ]);
}

/** Whether a run's page shows one of these runs: itself, or a child (`<parent>/<step>`), whose status its children list shows. */
function concerns(runId: string, changed: ReadonlySet<string>): boolean {
  if (changed.has(runId)) return true;
  for (const id of changed) if (id.startsWith(`${runId}/`)) return true;
  return false;
}

function showsRuns(query: Query): boolean {
  const [root, kind] = query.queryKey;
  return root === queryKeys.runs.all[0] && (kind === queryKeys.runs.all[1] || kind === queryKeys.stats[1]);
}

function readRunIds(data: string): string[] {
  try {
    const runIds = (JSON.parse(data) as { runIds?: unknown }).runIds;
    return Array.isArray(runIds) ? runIds.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

function describe(error: unknown): string {
  if (isApiError(error)) return error.status === 0 ? 'the server cannot be reached' : `${error.status} ${error.code}`;
  return error instanceof Error ? error.message : String(error);
}
