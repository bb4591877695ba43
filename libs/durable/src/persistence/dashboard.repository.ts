import type { ErrorInfo, RunStatus, WaitKind } from '../interfaces';
import { WAIT_KIND_NAMES } from '../wait-kinds/wait-kind.registry';
import { DurableDatabase } from './durable-database';
import { journalPartitions, runDaySql } from './journal-partitions';
import type { Tables } from './tables';
import { RUN_STATUSES } from './run.repository';
import { PLAIN_CLAIMABLE } from './sql/claim-runs.sql';
import { listedStatus } from './sql/run-status.sql';
import { waitingForSql } from './sql/wait-kinds.sql';

export interface JournalDaysRows {
  today: string;
  standingBytes: number;
  days: Array<{ day: string; runs: number; bytes: number }>;
}

export interface RunJournalRows {
  steps: Array<{
    key: string;
    kind: string;
    outcome: 'ok' | 'error';
    result: string | null;
    error: ErrorInfo | null;
    started_at: Date | null;
    finished_at: Date;
  }>;
  signals: Array<{ name: string; payload: string | null; delivered_at: Date; source: string | null }>;
  messages: Array<{ channel: string; key: string; seq: string; payload: string | null; sent_at: Date; acked_at: Date | null }>;
  children: Array<{
    id: string;
    workflow: string;
    status: RunStatus;
    parent_step: string | null;
    reused_from: string | null;
    detached: boolean;
  }>;
  parent: { id: string; workflow: string; status: RunStatus } | null;
  /** The runs forked from this one, oldest first. */
  forks: string[];
  /** The newest HISTORY_PAGE rows, oldest first, and one more before them when there is one (so the page knows there are earlier ones). */
  history: HistoryRow[];
}

export type HistoryRow = { id: string; at: Date; event: string; actor: string; detail: unknown };

/** How many history rows a run's detail carries, and an earlier page at most. */
export const HISTORY_PAGE = 500;

export interface StatsRows {
  byStatus: Record<RunStatus, number>;
  waitingByKind: Record<WaitKind, number>;
  oldestWaiting: { id: string; workflow: string; wait: Record<string, unknown> } | null;
  overdue: { count: number; oldestDueAt: Date | null };
  /** The figures above that passed `STATS_EXACT_UP_TO` and are the planner's estimates instead. */
  estimated: { byStatus: RunStatus[]; waitingByKind: Array<WaitKind>; overdue: boolean };
  instances: Array<{
    id: string;
    started_at: Date;
    heartbeat_at: Date;
    last_sweep_at: Date | null;
    alive: boolean;
    leases: number;
    detail: unknown;
  }>;
  lastSweepAt: Date | null;
  now: Date;
}

/** The history events the overview's charts count. */
export const ACTIVITY_EVENTS = ['started', 'completed', 'failed', 'parked'] as const;
export type ActivityEvent = (typeof ACTIVITY_EVENTS)[number];

/**
 * Counts are exact up to this many rows (an index range that stops there) and the planner's estimate
 * beyond, so a stats read costs the same at a million runs as at a hundred.
 */
export const STATS_EXACT_UP_TO = 10_000;

/** What operators read: a run's whole journal, and the figures that show the machinery is healthy. */
export class DashboardRepository {
  constructor(private readonly db: DurableDatabase) {}

  /**
   * The runs whose history grew after `afterId` (at most `limit` rows, oldest first) and the newest
   * id read; null `afterId`: only the newest id, to start from. One range of the history's key.
   */
  async historySince(afterId: string | null, limit: number): Promise<{ rows: Array<{ id: string; run_id: string }>; lastId: string }> {
    const t = this.db.tables;
    if (afterId === null) {
      const [row] = await this.db.query<{ id: string }>(`SELECT COALESCE(max(id), 0)::text AS id FROM ${t.history}`);
      return { rows: [], lastId: row.id };
    }
    const rows = await this.db.query<{ id: string; run_id: string }>(
      `SELECT id::text, run_id FROM ${t.history} WHERE id > $1 ORDER BY id LIMIT $2`,
      [afterId, limit],
    );
    return { rows, lastId: rows.length ? rows[rows.length - 1].id : afterId };
  }

  /**
   * Runs started, completed, failed and parked per `bucketMs` over the last `rangeMs`, counted from
   * the history (a BRIN range on its `at`), oldest bucket first; buckets with nothing are zeros.
   */
  async activity(rangeMs: number, bucketMs: number): Promise<Array<{ at: Date } & Record<ActivityEvent, number>>> {
    return this.db.query(
      `WITH bucket AS (SELECT $2 * interval '1 millisecond' AS width),
       counted AS (
         SELECT date_bin(bucket.width, at, timestamptz 'epoch') AS at, event, count(*)::int AS n
         FROM ${this.db.tables.history}, bucket
         WHERE at >= date_bin(bucket.width, now() - $1 * interval '1 millisecond', timestamptz 'epoch') AND event = ANY($3::text[])
         GROUP BY 1, 2
       )
       SELECT b.at, ${ACTIVITY_EVENTS.map((e) => `COALESCE(sum(c.n) FILTER (WHERE c.event = '${e}'), 0)::int AS ${e}`).join(', ')}
       FROM bucket, generate_series(date_bin(bucket.width, now() - $1 * interval '1 millisecond', timestamptz 'epoch'),
                                    date_bin(bucket.width, now(), timestamptz 'epoch'), bucket.width) AS b(at)
       LEFT JOIN counted c ON c.at = b.at
       GROUP BY b.at ORDER BY b.at`,
      [rangeMs, bucketMs, ACTIVITY_EVENTS],
    );
  }

  /** Everything recorded about one run, in one round trip. */
  async journal(runId: string): Promise<RunJournalRows> {
    const t = this.db.tables;
    const day = runDaySql(t, '$1'); // the one partition of its journal
    const [row] = await this.db.query<RunJournalRows>(
      `SELECT
        (SELECT COALESCE(json_agg(s ORDER BY s.finished_at, s.key), '[]') FROM (SELECT key, kind, outcome, result, error, started_at, finished_at FROM ${t.steps} WHERE run_id = $1 AND run_day = ${day}) s) AS steps,
        (SELECT COALESCE(json_agg(s ORDER BY s.delivered_at), '[]') FROM (SELECT name, payload, delivered_at, source FROM ${t.signals} WHERE run_id = $1 AND run_day = ${day}) s) AS signals,
        (SELECT COALESCE(json_agg(m ORDER BY m.channel, m.seq), '[]') FROM (SELECT channel, key, seq, payload, sent_at, acked_at FROM ${t.messages} WHERE run_id = $1 AND run_day = ${day}) m) AS messages,
        (SELECT COALESCE(json_agg(c ORDER BY c.seq), '[]') FROM (
           SELECT id, workflow, status, parent_step, seq, NULL AS reused_from, detached FROM ${t.runs} WHERE parent_id = $1
           UNION ALL
           -- A fork's children spawned before its fromStep are another run's, reused: its journal's spawns name them.
           SELECT c.id, c.workflow, c.status, c.parent_step, c.seq, c.parent_id, c.detached FROM ${t.steps} s JOIN ${t.runs} c ON c.id = s.result::jsonb->>'runId'
           WHERE s.run_id = $1 AND s.run_day = ${day} AND s.kind = 'child' AND c.parent_id <> $1
             AND EXISTS (SELECT 1 FROM ${t.runs} f WHERE f.id = $1 AND f.forked_from IS NOT NULL)) c) AS children,
        (SELECT row_to_json(p) FROM (SELECT p.id, p.workflow, p.status FROM ${t.runs} r JOIN ${t.runs} p ON p.id = r.parent_id WHERE r.id = $1) p) AS parent,
        (SELECT COALESCE(json_agg(f.id ORDER BY f.seq), '[]') FROM ${t.runs} f WHERE f.forked_from = $1) AS forks,
        (SELECT COALESCE(json_agg(h ORDER BY h.id), '[]') FROM (${historyPageSql(t)}) h) AS history`,
      [runId, null, HISTORY_PAGE + 1],
    );
    return row;
  }

  /**
   * The journal by day: each day's partitions' size on disk (with their indexes) and how many of its
   * runs are left, counted up to `cap` through runs_day_idx; the database's UTC today; and the size of
   * the history rows that are no run's (history_standing).
   */
  async journalDays(cap: number): Promise<JournalDaysRows> {
    const t = this.db.tables;
    const bytes = new Map<string, number>();
    let standingBytes = 0;
    for (const partition of await journalPartitions((sql, params) => this.db.query(sql, params), t)) {
      if (partition.day) bytes.set(partition.day, (bytes.get(partition.day) ?? 0) + partition.bytes);
      else standingBytes += partition.bytes;
    }
    const [{ today, days }] = await this.db.query<{ today: string; days: Array<{ day: string; runs: number }> }>(
      `SELECT timezone('UTC', now())::date::text AS today,
              (SELECT COALESCE(json_agg(json_build_object('day', d::text, 'runs', (SELECT count(*) FROM (SELECT 1 FROM ${t.runs} WHERE run_day = d LIMIT $2) c)) ORDER BY d), '[]')
               FROM unnest($1::date[]) d) AS days`,
      [[...bytes.keys()], cap],
    );
    return { today, standingBytes, days: days.map((d) => ({ ...d, bytes: bytes.get(d.day) ?? 0 })) };
  }

  /** Up to `limit` history rows of a run before the row `before` (by id), oldest first, and one more before them when there is one. */
  async historyBefore(runId: string, before: string, limit: number): Promise<HistoryRow[]> {
    const rows = await this.db.query<HistoryRow>(historyPageSql(this.db.tables), [runId, before, limit + 1]);
    return rows.reverse();
  }

  /**
   * The figures of the dashboard's overview. Each count walks an index and stops at
   * `STATS_EXACT_UP_TO` (a count that reaches it is then estimated); the oldest waiting run is the
   * first entry of `runs_waiting_since_idx`; the oldest overdue wake the first of `runs_due_idx`.
   */
  async stats(sweepIntervalMs: number, leaseMs: number): Promise<StatsRows> {
    const [row] = await this.db.transaction(
      async (client) =>
        (
          await client.query<{
            by_status: Record<RunStatus, number>;
            by_kind: Record<WaitKind, number>;
            oldest: StatsRows['oldestWaiting'];
            overdue: number;
            oldest_due: Date | null;
            instances: Array<Record<string, unknown>>;
            last_sweep: Date | null;
            now: Date;
          }>(this.db.statement(statsSql(this.db.tables), [2 * sweepIntervalMs, leaseMs, STATS_EXACT_UP_TO]))
        ).rows,
      STATS_PLANS_SQL,
    );
    const estimated: StatsRows['estimated'] = { byStatus: [], waitingByKind: [], overdue: false };
    // A count that reached the cap is replaced by the planner's estimate and said to be one.
    const figure = async (n: number, where: string, mark: () => unknown): Promise<number> => {
      if (n < STATS_EXACT_UP_TO) return n;
      mark();
      return this.estimate(where);
    };
    const byStatus = {} as Record<RunStatus, number>;
    for (const status of RUN_STATUSES) {
      byStatus[status] = await figure(row.by_status[status], statusCountedSql(status), () => estimated.byStatus.push(status));
    }
    const waitingByKind = {} as Record<WaitKind, number>;
    for (const kind of WAIT_KIND_NAMES) {
      waitingByKind[kind] = await figure(row.by_kind[kind], waitingForSql(kind), () => estimated.waitingByKind.push(kind));
    }
    const overdue = await figure(row.overdue, overdueWhereSql(Number(2 * sweepIntervalMs)), () => (estimated.overdue = true));
    return {
      byStatus,
      waitingByKind,
      oldestWaiting: row.oldest,
      overdue: { count: overdue, oldestDueAt: row.oldest_due },
      estimated,
      instances: row.instances as StatsRows['instances'],
      lastSweepAt: row.last_sweep,
      now: row.now,
    };
  }

  /**
   * The planner's row estimate for runs matching `where`, never below the exact count already seen.
   * The condition is inlined (our own constants), so it is planned for its values, not as a generic plan.
   */
  private async estimate(where: string): Promise<number> {
    const [row] = await this.db.query<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(
      `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${this.db.tables.runs} WHERE ${where}`,
    );
    return Math.max(STATS_EXACT_UP_TO, Math.round(row['QUERY PLAN'][0].Plan['Plan Rows']));
  }
}

/** Runs of a status, as the overview counts them (statuses are our own constants: a literal). */
const statusCountedSql = (status: RunStatus) => `${listedStatus()} = '${status}'`;

/** Runs whose wake is overdue by more than `ms` (a parameter or a number) and that a claim would take. */
const overdueWhereSql = (ms: string | number) => `wake_at < now() - ${ms} * interval '1 millisecond' AND ${PLAIN_CLAIMABLE}`;

/**
 * Sent with the overview's BEGIN: each count reads the range of an index that holds only the runs it
 * counts, so it stops at the cap whatever the statistics say. Compared with a parameter, a status was
 * estimated at the most common one's share, and a scan that filters on it looked as cheap as the
 * index: a sequential scan stopping at the cap (2.5 s at a million runs for a status with no runs),
 * a walk of runs_seq_key when the counts were asked in the list's order (every run's entry when the
 * visibility map was not set, as under a long transaction), or a bitmap of every entry of the status.
 */
export const STATS_PLANS_SQL = 'SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off';

/**
 * The overview's figures in one statement (DashboardRepository.stats), under STATS_PLANS_SQL. $1 the
 * overdue margin in ms, $2 the lease in ms, $3 the cap of each count.
 */
export const statsSql = (t: Tables) => {
  const capped = (where: string) => `(SELECT count(*) FROM (SELECT 1 FROM ${t.runs} WHERE ${where} LIMIT $3) c)::int`;
  // One count per status and per wait kind, its value written in, so that one with no runs is estimated
  // at none (STATS_PLANS_SQL has the rest).
  const counts = <V extends string>(values: readonly V[], where: (value: V) => string) =>
    `json_build_object(${values.map((v) => `'${v}', ${capped(where(v))}`).join(',\n          ')})`;
  return `SELECT now() AS now,
        ${counts(RUN_STATUSES, statusCountedSql)} AS by_status,
        ${counts(WAIT_KIND_NAMES, waitingForSql)} AS by_kind,
        (SELECT row_to_json(o) FROM (SELECT id, workflow, wait FROM ${t.runs} WHERE ${listedStatus()} = 'waiting' ORDER BY "${t.schema}".wait_since(wait) LIMIT 1) o) AS oldest,
        ${capped(overdueWhereSql('$1'))} AS overdue,
        (SELECT min(wake_at) FROM ${t.runs} WHERE ${overdueWhereSql('$1')}) AS oldest_due,
        (SELECT COALESCE(json_agg(i ORDER BY i.started_at), '[]') FROM (
           SELECT i.id, i.started_at, i.heartbeat_at, i.last_sweep_at, i.detail, i.heartbeat_at > now() - $2 * interval '1 millisecond' AS alive,
                  (SELECT count(*) FROM ${t.runs} r WHERE ${listedStatus('r.')} = 'running' AND r.lease_owner = i.id) AS leases
           FROM ${t.instances} i WHERE i.heartbeat_at > now() - interval '1 hour') i) AS instances,
        (SELECT max(last_sweep_at) FROM ${t.instances}) AS last_sweep`;
};

/**
 * A run's ($1) newest history rows before the id $2 (null: the newest of all), newest first, at most $3:
 * a range of history_run_idx, also in a generic plan (an `IS NULL OR` would leave the bound a filter).
 */
const historyPageSql = (t: Tables) =>
  `SELECT id, at, event, actor, detail FROM ${t.history}
   WHERE run_id = $1 AND run_day = ${runDaySql(t, '$1')} AND id < COALESCE($2::bigint, 9223372036854775807) ORDER BY id DESC LIMIT $3`;
