import type { ErrorInfo } from '../interfaces';
import { DurableDatabase } from './durable-database';
import { runDaySql } from './journal-partitions';
import { checkpointBatchSql, checkpointConflictSql, checkpointSql, deadlinePassedSql, timerBatchSql, timerSql } from './sql/checkpoint.sql';
import { FINISHED, loadJournalSql } from './sql/load-journal.sql';
import { ackMessageSql } from './sql/send-message.sql';
import { setKeysSql } from './sql/set-keys.sql';
import { BatchStatement, DEFAULT_GROUP_COMMIT, GroupCommit, groupCommitOn } from './group-commit';
import { retryTransient } from './transient-retry';

export interface StoredStep {
  kind?: string;
  outcome: 'ok' | 'error';
  result: string | null;
  error: ErrorInfo | null;
}

export interface StoredMessage {
  channel: string;
  key: string;
  seq: number;
  payload: string | null;
  sentAt: string;
}

export interface StoredChild {
  id: string;
  status: string;
  output: string | null;
  error: ErrorInfo | null;
  /** When it ended (read on demand only; a select's earliest-delivered rule compares it). */
  endedAt?: Date;
}

export interface LoadedJournal {
  dbNow: Date;
  /** Date.now() when the reading statement's answer arrived: pairs with dbNow for the clock (DbClock.observe). */
  answeredAt: number;
  wakeSeq: string;
  leaseToken: string;
  /** The run's format (runs.key_format; see KEY_FORMAT): how its keys spell names, and how its timed signal waits decide. */
  keyFormat: number;
  /** The run's deadline, if it has one. */
  deadline: Date | null;
  steps: Array<StoredStep & { key: string }>;
  signals: Array<{ name: string; payload: string | null; deliveredAt: string | Date }>;
  messages: StoredMessage[];
  children: StoredChild[];
}

/** The columns of journalColumnsSql as the driver returns them. */
export interface JournalRow {
  db_now: Date;
  deadline: Date | null;
  wake_seq: string;
  key_format: number;
  journal: Pick<LoadedJournal, 'steps' | 'signals' | 'messages' | 'children'>;
}

export const journalFromRow = (row: JournalRow, leaseToken: string, answeredAt: number): LoadedJournal => ({
  dbNow: row.db_now,
  answeredAt,
  wakeSeq: row.wake_seq,
  leaseToken,
  keyFormat: row.key_format,
  deadline: row.deadline,
  ...row.journal,
});

/** What a checkpoint write found: written, another writer's row, or the lease gone. */
export type CheckpointResult = { status: 'written' } | { status: 'exists'; step: StoredStep } | { status: 'lost' };

/** A journaled timer: its instant (serialized), the database's clock when it was read, and when that answer arrived. */
export interface JournaledTimer {
  until: string;
  dbNow: Date;
  answeredAt: number;
}

/** One timer waiting for its batch. */
interface TimerWrite {
  runId: string;
  token: string;
  key: string;
  kind: string;
  ms: number;
}

/** A checkpoint of one run: its key, kind, outcome, and when its step began. */
export interface StepCheckpoint {
  key: string;
  kind: string;
  step: StoredStep;
  startedAt: Date | null;
}

/** One checkpoint waiting for its batch. */
interface CheckpointWrite extends StepCheckpoint {
  runId: string;
  token: string;
}

/**
 * The journal of a run: its checkpoints, timers and acks, every write fenced by the lease token and
 * keyed, so each is retried through a cut session or a restarting server (retryTransient) instead of
 * failing the attempt and running its step again.
 */
export class JournalRepository {
  private readonly sql;
  private readonly checkpoints: (write: CheckpointWrite) => Promise<CheckpointResult>;
  private readonly timers: (write: TimerWrite) => Promise<JournaledTimer | undefined>;

  /** `group`: the instance's group commit, which sends checkpoints and timers with its other writes. `observe` hears each batch's size. */
  constructor(
    private readonly db: DurableDatabase,
    group: GroupCommit = groupCommitOn(db, DEFAULT_GROUP_COMMIT),
    observe?: (size: number) => void,
  ) {
    const t = db.tables;
    this.sql = {
      load: loadJournalSql(t),
      checkpoint: checkpointSql(t),
      checkpointBatch: checkpointBatchSql(t),
      setKeys: setKeysSql(t),
      conflict: checkpointConflictSql(t),
      deadlinePassed: deadlinePassedSql(t),
      timer: timerSql(t),
      timerBatch: timerBatchSql(t),
      ack: ackMessageSql(t),
    };
    this.checkpoints = group.kind(
      { one: (write) => this.checkpointAlone(write), batch: (writes) => this.checkpointBatch(writes) },
      observe,
    );
    this.timers = group.kind({ one: (write) => this.timerAlone(write), batch: (writes) => this.timerBatch(writes) }, observe);
  }

  async load(runId: string): Promise<LoadedJournal> {
    const [row] = await this.db.query<JournalRow & { lease_token: string }>(this.sql.load, [runId]);
    return journalFromRow(row, row.lease_token, Date.now());
  }

  /** Stores a checkpoint, grouped with those of other executions in flight; resolves once its own row is committed. */
  checkpoint(runId: string, token: string, key: string, kind: string, step: StoredStep, startedAt: Date | null): Promise<CheckpointResult> {
    return this.checkpoints({ runId, token, key, kind, step, startedAt });
  }

  /**
   * Journals the passing of the run's deadline `at` (see deadlinePassedSql), retried through transient
   * errors (a try after one that landed finds the row): 'moved' when the stored deadline is no longer
   * `at`, 'lost' when the lease is gone.
   */
  async passDeadline(runId: string, token: string, at: number, error: ErrorInfo): Promise<'written' | 'moved' | 'lost'> {
    const [row] = await retryTransient(() =>
      this.db.query<{ held: boolean; same: boolean }>(this.sql.deadlinePassed, [runId, token, new Date(at), JSON.stringify(error)]),
    );
    if (!row?.held) return 'lost';
    return row.same ? 'written' : 'moved';
  }

  /** A lone checkpoint's own statement, retried through transient errors (it is keyed and fenced). */
  private async checkpointAlone(w: CheckpointWrite): Promise<CheckpointResult> {
    const error = w.step.error ? JSON.stringify(w.step.error) : null;
    const rows = await retryTransient(() =>
      this.db.query(this.sql.checkpoint, [w.runId, w.token, w.key, w.kind, w.step.outcome, w.step.result, error, w.startedAt]),
    );
    return rows.length ? { status: 'written' } : this.conflict(w);
  }

  /**
   * One batch as one JSON array, retried whole through transient errors: every row is keyed and
   * fenced, so a try after one that landed inserts nothing and each row's answer comes from its conflict check.
   */
  private checkpointBatch(writes: CheckpointWrite[]): BatchStatement<CheckpointResult> {
    const batch = JSON.stringify(
      writes.map((w, n) => ({
        run_id: w.runId,
        token: w.token,
        key: w.key,
        kind: w.kind,
        outcome: w.step.outcome,
        result: w.step.result,
        error: w.step.error,
        started_at: w.startedAt,
        n,
      })),
    );
    return {
      sql: this.sql.checkpointBatch,
      params: [batch],
      answer: (rows) => {
        // Postgres text holds no NUL, so it cannot occur inside a run id or a key.
        const inserted = new Set(rows.map((r) => `${r.run_id}\0${r.key}`));
        // The first write of a (run, key) took the row; a second one in the same batch reads it back like any later writer.
        return writes.map((w) => (inserted.delete(`${w.runId}\0${w.key}`) ? { status: 'written' } : this.conflict(w)));
      },
    };
  }

  /** A checkpoint that inserted nothing: the lease is gone, or another writer's row is there. */
  private async conflict(w: CheckpointWrite): Promise<CheckpointResult> {
    const [found] = await retryTransient(() =>
      this.db.query<{ leased: boolean } & StoredStep>(this.sql.conflict, [w.runId, w.token, w.key]),
    );
    if (!found.leased) return { status: 'lost' };
    return { status: 'exists', step: { outcome: found.outcome, result: found.result, error: found.error } };
  }

  /**
   * Journals (or reads back) a timer instant of `ms` from the database's now, with that now and when
   * the answering statement was sent (for the clock); undefined when the lease is gone. Grouped with
   * the timers of other executions in flight, as checkpoints are: runs that begin together (a burst
   * of starts) journal their sleeps in one commit, not one after another.
   */
  timer(runId: string, token: string, key: string, kind: string, ms: number): Promise<JournaledTimer | undefined> {
    return this.timers({ runId, token, key, kind, ms });
  }

  /** A batch of timers, retried whole (each row is keyed and fenced). */
  private timerBatch(writes: TimerWrite[]): BatchStatement<JournaledTimer | undefined> {
    return {
      sql: this.sql.timerBatch,
      params: [JSON.stringify(writes.map((w, n) => ({ run_id: w.runId, token: w.token, key: w.key, kind: w.kind, ms: w.ms, n })))],
      answer: (rows) => {
        const answeredAt = Date.now();
        const byN = new Map(
          (rows as unknown as Array<{ n: number; leased: boolean; result: string | null; db_now: Date }>).map((r) => [r.n, r]),
        );
        return writes.map((w, n) => {
          const row = byN.get(n)!;
          if (!row.leased) return undefined;
          // Inserted by a concurrent writer while the batch waited on it: its own statement reads it back.
          return row.result === null ? this.timerAlone(w) : { until: row.result, dbNow: row.db_now, answeredAt };
        });
      },
    };
  }

  /** A lone timer's own statement. */
  private timerAlone(w: TimerWrite): Promise<JournaledTimer | undefined> {
    return retryTransient(async () => {
      const [row] = await this.db.query<{ leased: boolean; result: string; db_now: Date }>(this.sql.timer, [
        w.runId,
        w.token,
        w.key,
        w.ms,
        w.kind,
      ]);
      return row.leased ? { until: row.result, dbNow: row.db_now, answeredAt: Date.now() } : undefined;
    });
  }

  /** `ctx.setKeys` (see setKeysSql): false when the lease is gone; 'too-many' when the merge would exceed `max` keys. */
  async setKeys(runId: string, token: string, key: string, keys: string, max: number): Promise<boolean | 'too-many'> {
    const [row] = await retryTransient(() =>
      this.db.query<{ leased: boolean; fits: boolean }>(this.sql.setKeys, [runId, token, key, keys, max]),
    );
    if (!row.leased) return false;
    return row.fits || 'too-many';
  }

  /** A signal delivered since the journal was loaded, its payload and when it came; undefined when none was. */
  async readSignal(runId: string, name: string): Promise<{ payload: string | null; deliveredAt: Date } | undefined> {
    const rows = await this.db.query<{ payload: string | null; deliveredAt: Date }>(
      `SELECT payload, delivered_at AS "deliveredAt" FROM ${this.db.tables.signals}
       WHERE run_id = $1 AND run_day = ${runDaySql(this.db.tables, '$1')} AND name = $2`,
      [runId, name],
    );
    return rows[0];
  }

  /** Those of the run's children `ids` that have ended, with their outcomes (for a parent awaiting them). */
  async readChildren(ids: string[]): Promise<StoredChild[]> {
    return this.db.query<StoredChild>(
      `SELECT id, status, output, error, finished_at AS "endedAt" FROM ${this.db.tables.runs} WHERE id = ANY($1::text[]) AND status IN ${FINISHED}`,
      [ids],
    );
  }

  /** False when the lease is gone. */
  async ack(runId: string, token: string, channel: string, key: string): Promise<boolean> {
    const [row] = await retryTransient(() => this.db.query<{ leased: boolean }>(this.sql.ack, [runId, token, channel, key]));
    return row.leased;
  }
}
