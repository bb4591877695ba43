import { BeforeApplicationShutdown, Injectable, Logger, MessageEvent } from '@nestjs/common';
import {
  catchError,
  defer,
  EMPTY,
  exhaustMap,
  filter,
  finalize,
  from,
  interval,
  map,
  merge,
  Observable,
  of,
  share,
  ReplaySubject,
  takeUntil,
  timer,
} from 'rxjs';
import { DashboardRepository } from '../persistence/dashboard.repository';

/** How often the feed reads the history while a dashboard listens. */
export const FEED_INTERVAL_MS = 500;
/** A comment-like event that keeps proxies from closing an idle stream. */
const PING_EVERY_MS = 15_000;
/** History rows read a pass, at most; more wait for the next pass. */
const ROWS_PER_READ = 1_000;
/**
 * How far back each read looks again: a history id is taken at insert and its transaction may commit
 * after a higher one was read. A row that commits later than this many ids behind is left to the
 * dashboard's own slow refresh.
 */
const LATE_COMMIT_WINDOW = 200;

const READY = 'ready';
const READY_EVENT: MessageEvent = { type: READY, data: {} };

/**
 * What changed, for the dashboard's live updates (GET /api/events, server-sent events): the ids of the
 * runs whose history grew, whichever instance wrote it. Every status change of a run writes its
 * history, so one read of the history's key range while anyone listens covers them all; no NOTIFY on
 * the engine's hot path. One reader per module, shared by every open dashboard; it stops with the
 * last one.
 */
@Injectable()
export class RunChangeFeed implements BeforeApplicationShutdown {
  private readonly logger = new Logger('DurableDashboard');
  private readonly feed: Observable<MessageEvent>;
  /**
   * Ends every stream: an open one is never idle (its pings), and the HTTP server's close waits for it. It
   * replays, so a stream opened during the shutdown ends at once too.
   */
  private readonly closing = new ReplaySubject<void>(1);

  /** Whether the shared reader has made its first read: from then on, every change is reported. */
  private reading = false;

  constructor(private readonly dashboard: DashboardRepository) {
    const changes = defer(() => this.reads()).pipe(
      map((runIds): MessageEvent => (runIds === READY ? READY_EVENT : { type: 'runs', data: { runIds } })),
      finalize(() => (this.reading = false)),
    );
    const pings = interval(PING_EVERY_MS).pipe(map((): MessageEvent => ({ type: 'ping', data: {} })));
    this.feed = merge(changes, pings).pipe(share());
  }

  /**
   * The events: `ready` once every change from then on will be reported, `runs` with `{ runIds }`
   * when runs changed, `ping` now and then.
   */
  events(): Observable<MessageEvent> {
    return defer(() => (this.reading ? merge(of(READY_EVENT), this.feed) : this.feed)).pipe(takeUntil(this.closing));
  }

  /** Ends the open streams, whose responses then end: app.close() waited for them while any dashboard was open. */
  beforeApplicationShutdown(): void {
    this.closing.next();
    this.closing.complete();
  }

  private reads(): Observable<string[] | typeof READY> {
    let lastId: number | null = null;
    /** Ids read within the look-back window, so a row read twice is reported once. */
    const seen = new Set<number>();
    const read = async (): Promise<string[] | typeof READY> => {
      if (lastId === null) {
        lastId = Number((await this.dashboard.historySince(null, 0)).lastId);
        this.reading = true;
        return READY;
      }
      const since = Math.max(0, lastId - LATE_COMMIT_WINDOW);
      const { rows } = await this.dashboard.historySince(String(since), ROWS_PER_READ + LATE_COMMIT_WINDOW);
      const fresh = rows.filter((row) => !seen.has(Number(row.id)));
      for (const row of fresh) {
        seen.add(Number(row.id));
        lastId = Math.max(lastId, Number(row.id));
      }
      for (const id of seen) if (id <= lastId - LATE_COMMIT_WINDOW) seen.delete(id);
      return [...new Set(fresh.map((row) => row.run_id))];
    };
    return timer(0, FEED_INTERVAL_MS).pipe(
      exhaustMap(() =>
        from(read()).pipe(
          // A failed read (the database restarting) skips this pass; the next one reads from where this stopped.
          catchError((error: Error) => {
            this.logger.warn(`Reading run changes for the dashboard failed: ${error.message}`);
            return EMPTY;
          }),
        ),
      ),
      filter((runIds) => runIds === READY || runIds.length > 0),
    );
  }
}
