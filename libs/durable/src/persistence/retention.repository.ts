import { DurableDatabase, READ_COMMITTED } from './durable-database';
import type { RateWindows } from '../queues/queue-config';
import type { Tables } from './tables';
import { dropEmptiedJournalDays, LEGACY_DAY } from './journal-partitions';

/** What the cleanup deletes: the age in ms after which a run that ended so goes (undefined keeps it), and the batch size. */
export interface RetentionAges {
  completed?: number;
  failed?: number;
  cancelled?: number;
  batchSize: number;
  /**
   * The rate-limited queues declared here and their periods: a run of one is kept while it began within
   * its queue's period, as the rate window still counts it (deleted, it made room for more starts).
   */
  rateWindows: RateWindows;
}

/**
 * The days whose runs' journal retention deletes row by row with them: that of the runs from before the
 * journal was partitioned, and today and yesterday (UTC). A run started again under a deleted run's id
 * (ids of the application's own, a schedule's backfill) on the deleted run's day would take its keys in
 * that day's partitions, which stay until no run of the day is left, and replay its step results and
 * signals; a start is on today, or on yesterday for a transaction begun before midnight. With ages of
 * two days or more no run of these days is old enough to go, so the drop of days stays the only cost.
 */
const ROW_BY_ROW_DAYS = `'${LEGACY_DAY}', timezone('UTC', now())::date, timezone('UTC', now())::date - 1`;

/**
 * Deletes finished runs older than their kind's age, a batch per transaction; a child stays while its
 * parent, or a fork of it, may still read it. Their journal goes with their day's partitions once no run of that day is
 * left (dropEmptiedDays), except that of the days of ROW_BY_ROW_DAYS, deleted with them.
 * Advisory locks let one instance at a time clean a schema; the others skip.
 */
export class RetentionRepository {
  constructor(private readonly db: DurableDatabase) {}

  /**
   * Deletes one batch: how many runs it picked (the oldest due, whether another transaction held them or
   * not, so that a held one does not end the pass) and how many of them it deleted (those held, and those a
   * fork committed meanwhile keeps, are not), or null when another instance holds the lock.
   */
  async deleteBatch(retention: RetentionAges): Promise<{ picked: number; deleted: number } | null> {
    const t = this.db.tables;
    const ages = [retention.completed ?? null, retention.failed ?? null, retention.cancelled ?? null];
    return this.db.transaction(async (client) => {
      const [{ locked }] = (
        await client.query(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [`nestjs-durable:retention:${t.schema}`])
      ).rows;
      if (!locked) return null;
      // Locked first, then read again: a fork of a child's parent that committed after the locking statement's snapshot
      // is seen by the second statement's, and one not yet committed holds the child FOR KEY SHARE (forkRunSql), which
      // SKIP LOCKED passes over; a fork after the lock waits for this transaction and finds the child gone.
      const batch = await client.query<{ id: string; candidates: number }>(pickBatchSql(t), [
        ...ages,
        retention.batchSize,
        retention.rateWindows.queues,
        retention.rateWindows.periodsMs,
      ]);
      const { rows } = await client.query(
        `WITH doomed AS (
           SELECT id, run_day FROM ${t.runs} r WHERE r.id = ANY($4::text[]) AND ${doomedSql(t)}
         ), purged AS (
           -- The days are constants of the statement (pruned once), never taken from a deleted row: pruning by a
           -- day from an outer row crashed PostgreSQL 18.4 (timerBatchSql).
           SELECT id FROM doomed WHERE run_day IN (${ROW_BY_ROW_DAYS})
         ), steps AS (
           DELETE FROM ${t.steps} WHERE run_day IN (${ROW_BY_ROW_DAYS}) AND run_id IN (SELECT id FROM purged)
         ), signals AS (
           DELETE FROM ${t.signals} WHERE run_day IN (${ROW_BY_ROW_DAYS}) AND run_id IN (SELECT id FROM purged)
         ), messages AS (
           DELETE FROM ${t.messages} WHERE run_day IN (${ROW_BY_ROW_DAYS}) AND run_id IN (SELECT id FROM purged)
         ), history AS (
           DELETE FROM ${t.history} WHERE run_day IN (${ROW_BY_ROW_DAYS}) AND run_id IN (SELECT id FROM purged)
         ), runs AS (
           DELETE FROM ${t.runs} WHERE id IN (SELECT id FROM doomed) RETURNING id
         )
         SELECT count(*)::int AS deleted FROM runs`,
        [...ages, batch.rows.map((r) => r.id), retention.rateWindows.queues, retention.rateWindows.periodsMs],
      );
      // Instances that stopped beating a day ago are gone for good.
      await client.query(`DELETE FROM ${t.instances} WHERE heartbeat_at < now() - interval '1 day'`);
      return { picked: batch.rows[0]?.candidates ?? 0, deleted: rows[0].deleted as number };
    }, READ_COMMITTED); // the second statement needs its own snapshot
  }

  /**
   * Deletes the oldest `batchSize` of the schedules' skipped slots (by id, the order they were recorded
   * in) that were recorded longer ago than `ageMs`; true when each of those was, so more may be. It reads
   * the primary key's first rows only: `at` has no index, and a look for old rows by it read the whole table
   * at every pass (a paused per-second schedule records 86,400 a day).
   */
  async deleteSkips(ageMs: number, batchSize: number): Promise<boolean> {
    const t = this.db.tables;
    const [row] = await this.db.query<{ picked: number; deleted: number }>(
      `WITH picked AS (
         SELECT id, at FROM ${t.scheduleSkips} ORDER BY id LIMIT $2
       ), gone AS (
         DELETE FROM ${t.scheduleSkips} s USING picked p WHERE s.id = p.id AND p.at < now() - $1::bigint * interval '1 millisecond' RETURNING 1
       )
       SELECT (SELECT count(*) FROM picked)::int AS picked, (SELECT count(*) FROM gone)::int AS deleted`,
      [ageMs, batchSize],
    );
    return row.picked === batchSize && row.deleted === batchSize;
  }

  /** Drops the journal partitions of the days no run is left of; returns the days, or null when another instance holds the lock. */
  async dropEmptiedDays(): Promise<string[] | null> {
    const client = await this.db.pool.connect();
    try {
      return await dropEmptiedJournalDays(client, this.db.tables);
    } finally {
      client.release();
    }
  }
}

/**
 * The runs a batch of retention deletes (alias `r`), $1 to $3 the ages of completed, failed and
 * cancelled runs in ms (null: kept), unless keptNotSql keeps them.
 */
const doomedSql = (t: Tables) => `finished_at IS NOT NULL
  AND (${ENDS.map((status, i) => agedSql(status, i + 1)).join(' OR ')})
  AND ${keptNotSql(t)}`;

/** The statuses retention deletes, in the order of their ages ($1 to $3). */
const ENDS = ['completed', 'failed', 'cancelled'] as const;

/** A run that ended `status` longer ago than the age in `$param` (null: never). */
const agedSql = (status: (typeof ENDS)[number], param: number) =>
  `(status = '${status}' AND finished_at < now() - $${param}::bigint * interval '1 millisecond')`;

/**
 * The oldest $4 runs of doomedSql, locked (those another transaction holds are skipped: SKIP LOCKED):
 * the oldest of each status, each through its own index by finished_at (runs_completed_idx…), then the
 * oldest of those. Each status is read from its own age on: a run its age keeps (a failed run under a
 * longer age, or under none) is never read. Read as one range of finished_at, every batch read again
 * every old run kept, a longer age's failures among them. The runs keptNotSql keeps (a child whose
 * parent may read it, a fork's, a rate window's) are still read by each batch; they are few. Only the
 * runs picked are locked, not every status's oldest; each row also says how many were picked
 * (`candidates`), locked or not. Exported for its test.
 */
export const pickBatchSql = (t: Tables) => `
WITH candidates AS (
  SELECT id FROM (${ENDS.map(
    (status, i) => `
    (SELECT id, finished_at FROM ${t.runs} r WHERE ${agedSql(status, i + 1)} AND ${keptNotSql(t)} ORDER BY finished_at LIMIT $4)`,
  ).join(' UNION ALL')}
  ) oldest ORDER BY finished_at LIMIT $4
)
SELECT r.id, (SELECT count(*) FROM candidates)::int AS candidates FROM ${t.runs} r
-- Still ended when locked: a run retried since the snapshot is left alone, not held until the batch commits.
WHERE r.id IN (SELECT id FROM candidates) AND r.status IN (${ENDS.map((status) => `'${status}'`).join(', ')})
ORDER BY r.finished_at FOR UPDATE OF r SKIP LOCKED`;

/**
 * Not kept, though it ended long enough ago: $5 and $6 the rate-limited queues and their periods,
 * within which a run of one is kept (RetentionAges). A child goes only once its parent cannot read it
 * again: the parent is gone, completed or cancelled (a failed one may be retried); a subquery, so it
 * is one primary-key lookup per row. Nor may a fork of the parent (or a fork of that fork) that is not
 * completed or cancelled: its copied journal holds the spawn, and its handle reads this child
 * (runs_forked_from_idx, per child only). A fork is the link from a child's parent to the forks of
 * the fork, so it stays too while one of those is unfinished (per fork only).
 */
const keptNotSql = (t: Tables) => `((r.queue IS NULL OR r.began_at IS NULL OR NOT EXISTS (
    SELECT 1 FROM unnest($5::text[], $6::bigint[]) w(queue, ms) WHERE w.queue = r.queue AND r.began_at > now() - w.ms * interval '1 millisecond'))
  AND (r.parent_id IS NULL OR (
    COALESCE((SELECT p.status IN ('completed', 'cancelled') FROM ${t.runs} p WHERE p.id = r.parent_id), true)
    AND ${noUnfinishedForkOf(t, 'r.parent_id')}))
  AND (r.forked_from IS NULL OR ${noUnfinishedForkOf(t, 'r.id')}))`;

/** No fork of the run `id` (nor a fork of that fork, and so on) is unfinished. */
const noUnfinishedForkOf = (t: Tables, id: string) => `NOT EXISTS (
    WITH RECURSIVE forks AS (
      SELECT f.id, f.status FROM ${t.runs} f WHERE f.forked_from = ${id}
      UNION
      SELECT f.id, f.status FROM ${t.runs} f JOIN forks ON f.forked_from = forks.id
    )
    SELECT 1 FROM forks WHERE forks.status NOT IN ('completed', 'cancelled')
  )`;
