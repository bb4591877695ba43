import { queueChannel, wakeChannel } from '../durable.constants';
import type { ErrorInfo } from '../interfaces';
import { DurableDatabase } from './durable-database';
import { BatchStatement, DEFAULT_GROUP_COMMIT, GroupCommit, groupCommitOn } from './group-commit';
import type { StepCheckpoint } from './journal.repository';
import type { ClaimedRun } from './run.repository';
import { expireUnbegunSql } from './sql/expire-unbegun.sql';
import { expirePendingPastGraceSql } from './sql/expire-pending-past-grace.sql';
import { END_PARTS, finishRunSql, finishRunsSql, partsIndex } from './sql/finish-run.sql';
import { retryRolledBack, retryTransient } from './transient-retry';

/** One run's end waiting for its batch. */
interface RunEnd {
  id: string;
  token: string;
  status: 'completed' | 'failed';
  output: string | null;
  error: ErrorInfo | null;
  actor: string;
  graceMs: number | null;
  /** What its statement leaves out (ClaimedRun.parentless and unqueued). */
  parentless: boolean;
  unqueued: boolean;
  /** The checkpoint the execution left pending, as finishRunSql's $9 reads it. */
  checkpoint: ReturnType<typeof checkpointRecord> | null;
}

/**
 * Ends runs (completed or failed), fenced by their lease tokens, with group commit: the ends of
 * concurrent executions in one instance go out together, as the checkpoints do (see GroupCommit). And
 * fails the runs whose deadline passed before they began, which no execution holds.
 */
export class RunEndRepository {
  private readonly sql;
  private readonly ends: (end: RunEnd) => Promise<boolean>;

  /** `group`: the instance's group commit, which sends ends with its other writes. */
  constructor(
    private readonly db: DurableDatabase,
    group: GroupCommit = groupCommitOn(db, DEFAULT_GROUP_COMMIT),
  ) {
    const t = db.tables;
    this.sql = {
      one: END_PARTS.map((parts) => finishRunSql(t, parts)),
      batch: END_PARTS.map((parts) => finishRunsSql(t, parts)),
      expire: expireUnbegunSql(t),
      expireGraceEnded: expirePendingPastGraceSql(t),
      channel: wakeChannel(t.schema),
      queueChannel: queueChannel(t.schema),
    };
    this.ends = group.kind({ one: (end) => this.finishOne(end), batch: (ends) => this.finishBatch(ends) });
  }

  /**
   * Fails up to `limit` runs whose deadline passed before they began (expireUnbegunSql); answers the
   * workflow of each. A deadlock (the parent's wake against a cancel's cascade) rolled it back whole: tried again.
   */
  async expireUnbegun(limit: number, actor: string): Promise<string[]> {
    const [row] = await retryRolledBack(() =>
      this.db.query<{ workflows: string[] | null }>(this.sql.expire, [limit, actor, this.sql.channel]),
    );
    return row.workflows ?? [];
  }

  /**
   * Fails up to `limit` runs that began and waited pending while their grace ended (expirePendingPastGraceSql),
   * of the workflows `graces` names; answers the workflow of each. A deadlock rolled it back whole: tried again.
   */
  async expirePendingPastGrace(graces: Array<{ workflow: string; grace_ms: number }>, limit: number, actor: string): Promise<string[]> {
    const [row] = await retryRolledBack(() =>
      this.db.query<{ workflows: string[] | null }>(this.sql.expireGraceEnded, [JSON.stringify(graces), limit, actor, this.sql.channel]),
    );
    return row.workflows ?? [];
  }

  /**
   * Ends the run unless its lease is gone; false then. `graceMs`: the end is the run deadline's grace
   * running out, and happens only if the stored deadline (which an operator may have moved) still says so.
   * `checkpoint`: the run's last checkpoint, left pending to be written with the end, and only if it is.
   */
  finish(
    run: ClaimedRun,
    status: 'completed' | 'failed',
    output: string | null,
    error: ErrorInfo | null,
    actor: string,
    graceMs?: number,
    checkpoint?: StepCheckpoint,
  ): Promise<boolean> {
    return this.ends({
      id: run.id,
      token: run.leaseToken,
      status,
      output,
      error,
      actor,
      graceMs: graceMs ?? null,
      parentless: run.parentless === true,
      unqueued: run.unqueued === true,
      checkpoint: checkpoint ? checkpointRecord(checkpoint) : null,
    });
  }

  /** Retried through transient errors: each end is fenced and idempotent (see finishRunSql). */
  private async finishOne(e: RunEnd): Promise<boolean> {
    const error = e.error ? JSON.stringify(e.error) : null;
    const params = [
      e.id,
      e.token,
      e.status,
      e.output,
      error,
      e.actor,
      e.graceMs,
      this.sql.channel,
      e.checkpoint && JSON.stringify(e.checkpoint),
    ];
    const sql = this.sql.one[partsIndex(e)];
    const rows = await retryTransient(() => this.db.query(sql, e.unqueued ? params : [...params, this.sql.queueChannel]));
    return rows.length > 0;
  }

  /**
   * Retried whole through transient errors, as finishOne. Prepared, as every statement: its plan (each
   * run locked and updated through the primary key) needs the runs table's statistics, which
   * RunStatisticsService keeps current while the table is young.
   */
  private finishBatch(ends: RunEnd[]): BatchStatement<boolean> {
    const batch = JSON.stringify(
      ends.map((e) => ({
        id: e.id,
        token: e.token,
        status: e.status,
        output: e.output,
        error: e.error,
        actor: e.actor,
        grace_ms: e.graceMs,
        checkpoint: e.checkpoint,
      })),
    );
    const parts = { parentless: ends.every((e) => e.parentless), unqueued: ends.every((e) => e.unqueued) };
    return {
      sql: this.sql.batch[partsIndex(parts)],
      params: parts.unqueued ? [batch, this.sql.channel] : [batch, this.sql.channel, this.sql.queueChannel],
      answer: (rows) => {
        // By id and token: a stale end of a run whose current end is in the same batch is not answered as ended.
        const ended = new Set(rows.map((r) => `${r.id}\0${r.token}`));
        return ends.map((e) => ended.has(`${e.id}\0${e.token}`));
      },
    };
  }
}

/** A checkpoint as the end's statement reads it (endCheckpointSql). */
const checkpointRecord = (c: StepCheckpoint) => ({
  key: c.key,
  kind: c.kind,
  outcome: c.step.outcome,
  result: c.step.result,
  error: c.step.error,
  started_at: c.startedAt,
});
