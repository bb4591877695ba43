import type { EntityManager } from 'typeorm';
import { queueChannel, wakeChannel } from '../durable.constants';
import { InvalidArgumentError } from '../errors';
import type { ErrorInfo, RunFilter, RunStatus, RunView, RunWarning, WaitReason } from '../interfaces';
import { isWaitKind, ParkingReason, WAIT_KIND_NAMES, WAIT_TIME_FIELDS } from '../wait-kinds/wait-kind.registry';
import { deserialize } from '../schema/serializer';
import { isStorableText } from '../schema/define-signal';
import { checkKeys } from '../schema/business-keys';
import { DurableDatabase } from './durable-database';
import { journalFromRow, JournalRow, LoadedJournal } from './journal.repository';
import { claimRunsSql, PLAIN_CLAIMABLE } from './sql/claim-runs.sql';
import { parkRunSql, scheduleRetrySql } from './sql/park-run.sql';
import { releaseRunsSql, renewLeasesSql } from './sql/renew-leases.sql';
import { listedStatus } from './sql/run-status.sql';
import { waitingForSql } from './sql/wait-kinds.sql';
import {
  CLAIMED_START_FIELDS,
  ClaimedStartRow,
  reclaimStartedRunsSql,
  startClaimedRunSql,
  startClaimedRunsSql,
  startRunSql,
} from './sql/start-run.sql';
import { debounceStartSql } from './sql/debounce-start.sql';
import { notUnbegunPastDeadlineSql } from './sql/expire-unbegun.sql';
import { QueuedStartRow, startQueuedRunsSql } from './sql/start-queued-runs.sql';
import { DEFAULT_PRIORITY, QueuePlacement } from '../queues/queue-placement';
import { retryOutsideTransaction, retryTelling, retryTransient } from './transient-retry';
import { BatchStatement, DEFAULT_GROUP_COMMIT, GroupCommit, groupCommitOn } from './group-commit';

export const RUN_STATUSES: readonly RunStatus[] = ['pending', 'running', 'waiting', 'completed', 'failed', 'cancelled'];

/** A cursor listRuns can have returned: the digits of a run's seq, a positive bigint. */
export function isRunCursor(cursor: unknown): boolean {
  return typeof cursor === 'string' && /^\d{1,19}$/.test(cursor) && BigInt(cursor) <= 9_223_372_036_854_775_807n;
}

/** A run as a worker holds it after a claim or a local start. */
export interface ClaimedRun {
  id: string;
  workflow: string;
  input: string | null;
  attempt: number;
  attemptBase: number;
  leaseToken: string;
  /** Known when the run was started here: nothing is journaled yet, so the load can be skipped. */
  fresh?: boolean;
  /** The starter's trace context (as its propagator wrote it), so the run's spans join its trace. */
  traceContext?: string | null;
  /** Seconds between the run's wake time and its claim (for a run admitted from a queue's backlog: its wait there). */
  lateness?: number;
  /** The queue whose backlog this run was admitted from. */
  admittedFrom?: string;
  wakeSeq?: string;
  /** A fresh run's deadline (a claimed run's comes with its journal). */
  deadline?: Date | null;
  /** Read by the claim itself, so the execution need not load it. */
  journal?: LoadedJournal;
  /**
   * Known to have no parent (started here as such, or said so by the claim or delivery that claimed
   * it): its end wakes no parent, so it goes out without that part (finishRunSql's EndParts).
   */
  parentless?: boolean;
  /** Known not to be queued, as `parentless`: its end frees no slot of a queue. */
  unqueued?: boolean;
}

/** A claimed run's columns with its journal, as a claim or a claiming delivery selects them. */
export interface ClaimedRow extends JournalRow {
  /** Whether the journal read with the claim is complete (see claimRunsSql). */
  current: boolean;
  workflow: string;
  input: string | null;
  attempt: number;
  attempt_base: number;
  lease_token: string;
  trace_context: string | null;
  /** ClaimedRun.parentless and unqueued; absent where the claim does not say. */
  parentless?: boolean;
  unqueued?: boolean;
}

export const claimedFromRow = (id: string, r: ClaimedRow, answeredAt: number, lateness: number, admittedFrom?: string): ClaimedRun => ({
  id,
  workflow: r.workflow,
  input: r.input,
  attempt: r.attempt,
  attemptBase: r.attempt_base,
  leaseToken: r.lease_token,
  traceContext: r.trace_context,
  lateness,
  admittedFrom,
  parentless: r.parentless === true,
  unqueued: r.unqueued === true,
  journal: r.current ? journalFromRow(r, r.lease_token, answeredAt) : undefined,
});

/** A held lease as a renewal found it: still ours (running or not, renewed or skipped this beat), or cancelled since. */
export interface RenewedLease {
  running: boolean;
  renewed: boolean;
  deadline: Date | null;
  cancelled: boolean;
}

export interface StartRunArgs {
  id: string;
  workflow: string;
  input: string;
  claimBy?: string;
  /**
   * With `claimBy`: whether that instance executes the run `id` already. A try after a lost one claims
   * back a run inserted as this start inserts it (withReclaimed), and must not take over one an earlier
   * start of the same id executes there.
   */
  executingHere?: (runId: string) => boolean;
  leaseMs: number;
  parentId?: string;
  parentStep?: string;
  /** A child's parent's lease token: the child is inserted only while the parent holds it. */
  parentToken?: string;
  actor: string;
  traceContext: string | null;
  /** A delayed start: the instant, or milliseconds from the database's now() (see startRunSql). */
  startAt?: Date;
  delayMs?: number;
  /** The run's queue and place in it (none: not queued). */
  placement?: QueuePlacement;
  /** With `claimBy`, a queued run begins at once in one of this many slots of its queue when one is free (null: no limit). */
  queueConcurrency?: number | null;
  /** Its deadline (see startRunSql): an instant, or a timeout, from now or (queued, delayed) from its first execution. */
  limits?: RunLimits;
  /** A child that keeps neither its parent's deadline nor its parent's cancel. */
  detached?: boolean;
  /** Its business keys, checked. */
  keys?: Record<string, string>;
  /** The application's version, stamped on the run. */
  appVersion?: string | null;
}

/** A run's deadline as a start asks for it: an instant, or a timeout and where it counts from. */
export interface RunLimits {
  deadline?: Date;
  timeoutMs?: number;
  timeoutIncludesQueue?: boolean;
}

/** A run a delayed start inserted waiting for its instant. */
export interface DelayedRun {
  startsAt: Date;
}

/**
 * What a start did: its run claimed here, waiting for its instant, inserted pending, not inserted as
 * its parent lost the lease, not inserted as an unfinished run of its queue holds its deduplication
 * id, or (null) not inserted as its id exists.
 */
export type StartAnswer = ClaimedRun | DelayedRun | 'pending' | 'parent-lost' | { duplicateOf: string; workflow: string } | null;

export interface WaitSpec {
  reason: ParkingReason;
  name: string | null;
  wakeAt: Date | null;
}

/** A start claimed here with neither a parent nor a delay: a batch need not check a parent's row or an instant. */
const claimedTopLevel = (a: StartRunArgs): boolean =>
  a.claimBy !== undefined &&
  a.parentId === undefined &&
  a.parentToken === undefined &&
  !a.detached &&
  a.startAt === undefined &&
  a.delayMs === undefined;

/** Which batch a start may go out with: plain (startClaimedRunsSql), queued (startQueuedRunsSql), or none. */
const batchOf = (a: StartRunArgs): 'plain' | 'queued' | null => {
  if (!claimedTopLevel(a)) return null;
  if (!a.placement?.queue) return 'plain';
  // A partition key or a deduplication id is checked against other runs of the queue: the lone statement does that.
  return a.placement.partitionKey === null && a.placement.deduplicationId === null ? 'queued' : null;
};

/** A batchable start as startClaimedRunSql and startClaimedRunsSql take it, `ord` its place in a batch. */
const claimedStartRow = (a: StartRunArgs, ord: number): ClaimedStartRow => ({
  ord,
  id: a.id,
  workflow: a.workflow,
  input: a.input,
  owner: a.claimBy,
  lease_ms: a.leaseMs,
  actor: a.actor,
  trace: a.traceContext,
  deadline: a.limits?.deadline ?? null,
  timeout_ms: a.limits?.timeoutMs ?? null,
  keys: a.keys && Object.keys(a.keys).length ? a.keys : null,
  app_version: a.appVersion ?? null,
});

/** A queued start as startQueuedRunsSql takes it. */
const queuedStartRow = (a: StartRunArgs, ord: number): QueuedStartRow =>
  // Assigned, not spread: the spread copy took about 7 µs a row to build on Node 20, the assignment 0.1 (measured).
  Object.assign(claimedStartRow(a, ord), {
    queue: a.placement!.queue,
    slots: a.queueConcurrency ?? null,
    priority: a.placement!.priority,
    includes_queue: a.limits?.timeoutIncludesQueue ?? false,
  });

/** A claimed start's row as startClaimedRunSql and startClaimedRunsSql answer it. */
interface ClaimedStartAnswer {
  ord: number;
  id: string;
  lease_token: string;
  wake_seq: string;
  attempt: number;
  deadline: Date | null;
  /** A queued batch's (startQueuedRunsSql): 'pending' for a start left for admission. */
  status?: string;
  /** Claimed back after a lost answer (reclaimStartedRunsSql), not inserted by the try that answered. */
  reclaimed?: boolean;
}

/** Starts of one run tried while the run holding its deduplication id keeps ending before it is read. */
const DEDUPLICATED_TRIES = 3;

/** How long a batch of starts waits for a lock (another transaction inserting one of its ids) before it is split. */
const START_BATCH_LOCK_TIMEOUT = '100ms';

/** A run's workflow, status and parent (RunRepository.brief). */
export interface RunBrief {
  workflow: string;
  status: RunStatus;
  parentId: string | null;
  parentStep: string | null;
  beforeParent: boolean;
}

/** The runs table: starting, claiming, leasing, parking and ending runs, and reading them back. */
export class RunRepository {
  private readonly sql;
  private readonly starts: (start: StartRunArgs) => Promise<ClaimedRun | null>;
  private readonly queuedStarts: (start: StartRunArgs) => Promise<StartAnswer>;

  /** Hears each start batch's size (set by the telemetry, which reads the runs table for its gauges). */
  observeStartBatches?: (size: number) => void;

  /** `group`: the instance's group commit, which sends the starts it executes with its other writes. */
  constructor(
    private readonly db: DurableDatabase,
    group: GroupCommit = groupCommitOn(db, DEFAULT_GROUP_COMMIT),
  ) {
    const t = db.tables;
    this.starts = group.kind(
      // A batchable start answers a claimed run, or null when its id exists.
      { one: (start, afterBatch) => this.startClaimed(start, afterBatch), batch: (starts) => this.startBatch(starts) },
      (size) => this.observeStartBatches?.(size),
    );
    this.queuedStarts = group.kind(
      { one: (start, afterBatch) => this.startAlone(start, undefined, afterBatch), batch: (starts) => this.startQueuedBatch(starts) },
      (size) => this.observeStartBatches?.(size),
    );
    this.sql = {
      start: startRunSql(t),
      startClaimed: startClaimedRunSql(t),
      startClaimedBatch: startClaimedRunsSql(t, START_BATCH_LOCK_TIMEOUT),
      reclaimStarted: reclaimStartedRunsSql(t),
      startQueuedBatch: startQueuedRunsSql(t, START_BATCH_LOCK_TIMEOUT),
      debounce: debounceStartSql(t),
      claim: claimRunsSql(t),
      park: parkRunSql(t),
      retry: scheduleRetrySql(t),
      renew: renewLeasesSql(t),
      release: releaseRunsSql(t),
      channel: wakeChannel(t.schema),
      queueChannel: queueChannel(t.schema),
    };
  }

  /**
   * Inserts the run; returns it claimed when `claimBy` is set and it is new, its instant when a delayed
   * start left it waiting, `null` when the id exists, the run holding the deduplication id when one
   * does, or 'parent-lost' (nothing inserted) when `parentToken` is no longer the parent's. A plain
   * start claimed here, outside a caller's transaction, goes out with those of concurrent callers
   * (group commit, as the checkpoints and the ends do): it resolves once its own row is committed.
   */
  async start(args: StartRunArgs, manager?: EntityManager): Promise<StartAnswer> {
    const batch = manager ? null : batchOf(args);
    if (batch === 'plain') return this.starts(args);
    if (batch === 'queued') return this.queuedStarts(args);
    return this.startAlone(args, manager);
  }

  /**
   * A lone plain start that batchOf() let through: startClaimedRunSql, retried through transient errors as
   * startAlone is. `afterBatch`: sent again after its batch failed (GroupWriter), answered as after a retry.
   */
  private async startClaimed(start: StartRunArgs, afterBatch = false): Promise<ClaimedRun | null> {
    const row = claimedStartRow(start, 0);
    const { answer: rows, retried } = await retryTelling(undefined, () =>
      this.db.query<ClaimedStartAnswer>(
        this.sql.startClaimed,
        CLAIMED_START_FIELDS.map(([name]) => row[name]),
      ),
    );
    const inserted = (await this.withReclaimed([start], rows, retried || afterBatch)).get(0);
    return inserted ? this.claimedStart(start, inserted) : null;
  }

  /**
   * A batch of plain starts that batchOf() let through. Retried whole through transient errors, like a lone
   * start: a try after one that committed but whose answer was lost inserts nothing, and its runs, claimed
   * here but not executed, are claimed back (withReclaimed). A batch that waits on another transaction's
   * insert of one of its ids (a start in an application transaction not yet committed) gives up after
   * START_BATCH_LOCK_TIMEOUT and is split (GroupCommit): only that start waits, not the others behind it.
   */
  private startBatch(starts: StartRunArgs[]): BatchStatement<ClaimedRun | null> {
    return {
      sql: this.sql.startClaimedBatch,
      params: [JSON.stringify(starts.map(claimedStartRow))],
      setsLockTimeout: true,
      answer: async (rows, { retried }) => {
        const inserted = await this.withReclaimed(starts, rows as unknown as ClaimedStartAnswer[], retried);
        return starts.map((a, ord) => {
          const row = inserted.get(ord);
          return row ? this.claimedStart(a, row) : null;
        });
      },
    };
  }

  /**
   * A batch of queued starts that batchOf() let through (startQueuedRunsSql), retried and split as a
   * batch of plain starts is (startBatch): each answers its run claimed, 'pending' (left for admission;
   * its queue was NOTIFYed), or null when its id exists.
   */
  private startQueuedBatch(starts: StartRunArgs[]): BatchStatement<StartAnswer> {
    return {
      sql: this.sql.startQueuedBatch,
      params: [JSON.stringify(starts.map(queuedStartRow)), this.sql.queueChannel],
      setsLockTimeout: true,
      answer: async (rows, { retried }) => {
        const inserted = await this.withReclaimed(starts, rows as unknown as ClaimedStartAnswer[], retried);
        return starts.map((a, ord) => {
          const row = inserted.get(ord);
          if (!row) return null;
          return row.status === 'pending' ? 'pending' : this.claimedStart(a, row);
        });
      },
    };
  }

  /**
   * `afterBatch`: a queued start sent again after its batch failed (GroupWriter), answered as after a retry.
   * `tries`: the starts made already, when the run holding the deduplication id ended before it was read.
   */
  private async startAlone(args: StartRunArgs, manager?: EntityManager, afterBatch = false, tries = 1): Promise<StartAnswer> {
    const {
      answer: [row],
      retried,
    } = await retryTelling(manager, () =>
      this.db.query<{
        admitted: boolean;
        id: string | null;
        status: string;
        wake_at: Date;
        lease_token: string;
        wake_seq: string;
        attempt: number;
        deadline: Date | null;
      }>(
        this.sql.start,
        [
          args.id,
          args.workflow,
          args.claimBy ? 'running' : 'pending',
          args.input,
          args.claimBy ?? null,
          args.leaseMs,
          args.parentId ?? null,
          args.parentStep ?? null,
          args.actor,
          this.sql.channel,
          args.traceContext,
          args.parentToken ?? null,
          args.startAt ?? null,
          args.delayMs ?? null,
          args.placement?.queue ?? null,
          args.placement?.partitionKey ?? null,
          args.placement?.priority ?? DEFAULT_PRIORITY,
          args.placement?.deduplicationId ?? null,
          this.sql.queueChannel,
          args.limits?.deadline ?? null,
          args.limits?.timeoutMs ?? null,
          args.limits?.timeoutIncludesQueue ?? false,
          args.detached ?? false,
          args.keys && Object.keys(args.keys).length ? JSON.stringify(args.keys) : null,
          args.appVersion ?? null,
          args.queueConcurrency ?? null,
        ],
        manager,
      ),
    );
    if (!row.admitted) return 'parent-lost';
    if (row.id === null) {
      const reclaimed = (await this.withReclaimed([args], [], retried || afterBatch)).get(0);
      if (reclaimed) return this.claimedStart(args, reclaimed);
      if (!args.placement?.deduplicationId) return null;
      const { holder, exists } = await this.deduplicated(args.id, args.placement, manager);
      if (holder) return { duplicateOf: holder.id, workflow: holder.workflow };
      if (exists) return null;
      // Neither: the run that held the deduplication id ended between the insert and this read, and the id is free.
      if (tries < DEDUPLICATED_TRIES) return this.startAlone(args, manager, afterBatch, tries + 1);
      throw new Error(
        `The start of run "${args.id}" found the deduplication id "${args.placement.deduplicationId}" of queue "${args.placement.queue}" held ${tries} times by a run that ended before it could be read.`,
      );
    }
    if (row.status === 'waiting') return { startsAt: row.wake_at };
    if (row.status === 'pending') return 'pending';
    return this.claimedStart(args, { ...row, id: row.id });
  }

  /**
   * The answers of claimed starts, by their place, with the runs that a try whose answer was lost had
   * inserted: when a try failed before the one that answered (`retried`), a claimed start answered
   * "existed" may be its own, inserted by the lost try and claimed here but executed by nobody. Such
   * runs are claimed back (reclaimStartedRunsSql) and answered as inserted; without this they waited
   * for their lease to lapse, and the caller was told they existed already. A run this instance
   * executes is an earlier start's, never the lost try's (whose answer never came): it is left to its
   * execution, and the start answers that it existed.
   */
  private async withReclaimed(
    starts: StartRunArgs[],
    rows: ClaimedStartAnswer[],
    retried: boolean,
  ): Promise<Map<number, ClaimedStartAnswer>> {
    const answered = new Map(rows.map((r) => [r.ord, r]));
    if (!retried) return answered;
    const unanswered = starts.flatMap((a, ord) =>
      answered.has(ord) || a.claimBy === undefined || a.executingHere?.(a.id)
        ? []
        : [{ ord, id: a.id, workflow: a.workflow, input: a.input }],
    );
    if (!unanswered.length) return answered;
    const reclaimed = await retryTransient(() =>
      this.db.query<ClaimedStartAnswer>(this.sql.reclaimStarted, [JSON.stringify(unanswered), starts[0].claimBy, starts[0].leaseMs]),
    );
    for (const row of reclaimed) answered.set(row.ord, { ...row, reclaimed: true });
    return answered;
  }

  /** A run this instance inserted claimed: it executes with nothing to load (one claimed back loads its journal). */
  private claimedStart(
    args: StartRunArgs,
    row: { id: string; lease_token: string; wake_seq: string; attempt: number; deadline: Date | null; reclaimed?: boolean },
  ): ClaimedRun {
    return {
      id: row.id,
      workflow: args.workflow,
      input: args.input,
      attempt: row.attempt,
      attemptBase: 0,
      leaseToken: row.lease_token,
      fresh: !row.reclaimed,
      wakeSeq: row.wake_seq,
      deadline: row.deadline,
      traceContext: args.traceContext,
      parentless: args.parentId === undefined,
      unqueued: !args.placement?.queue,
    };
  }

  /**
   * Why a start of run `id` inserted nothing: the unfinished run of the placement's queue that holds its
   * deduplication id (with its workflow), or the id exists.
   */
  private async deduplicated(
    id: string,
    placement: QueuePlacement,
    manager?: EntityManager,
  ): Promise<{ holder?: { id: string; workflow: string }; exists: boolean }> {
    const t = this.db.tables;
    // A read: tried again through transient errors, as the start before it (within a caller's transaction, its caller decides).
    const [row] = await retryOutsideTransaction(manager, () =>
      this.db.query<{ holder: string | null; workflow: string | null; exists: boolean }>(
        `SELECT h.id AS holder, h.workflow, EXISTS (SELECT 1 FROM ${t.runs} WHERE id = $3) AS exists
         FROM (SELECT 1) one LEFT JOIN ${t.runs} h ON h.queue = $1 AND h.deduplication_id = $2 AND h.status IN ('pending', 'running', 'waiting')`,
        [placement.queue, placement.deduplicationId, id],
        manager,
      ),
    );
    return { holder: row.holder === null ? undefined : { id: row.holder, workflow: row.workflow! }, exists: row.exists };
  }

  /**
   * A debounced start (see debounceStartSql): the run not yet begun that shares the key takes this
   * input and instant, or a new run is inserted waiting for it. Retried once when a concurrent start
   * of the same key inserted between the two halves. `expired`: how many runs that held the key past
   * their deadline, never begun, it failed on the way (across both tries).
   */
  async debounce(
    args: Omit<StartRunArgs, 'claimBy' | 'leaseMs' | 'parentId' | 'parentStep' | 'parentToken' | 'startAt' | 'delayMs' | 'detached'> & {
      placement: QueuePlacement & { debounce: NonNullable<QueuePlacement['debounce']> };
    },
    manager?: EntityManager,
  ): Promise<{ runId: string; created: boolean; startsAt: Date; expired: number }> {
    const { placement } = args;
    let expired = 0;
    for (let attempt = 0; ; attempt++) {
      const [row] = await retryOutsideTransaction(manager, () =>
        this.db.query<{ id: string | null; wake_at: Date; created: boolean; expired: string }>(
          this.sql.debounce,
          [
            args.id,
            args.workflow,
            args.input,
            placement.debounce.key,
            placement.debounce.delayMs,
            placement.debounce.maxDelayMs,
            placement.queue,
            placement.partitionKey,
            placement.priority,
            args.actor,
            args.traceContext,
            args.limits?.deadline ?? null,
            args.limits?.timeoutMs ?? null,
            args.limits?.timeoutIncludesQueue ?? false,
            args.keys && Object.keys(args.keys).length ? JSON.stringify(args.keys) : null,
            args.appVersion ?? null,
            this.sql.channel,
          ],
          manager,
        ),
      );
      expired += Number(row.expired);
      if (row.id !== null) return { runId: row.id, created: row.created, startsAt: row.wake_at, expired };
      if (attempt > 0)
        throw new Error(`A debounced start of "${args.workflow}" (key "${placement.debounce.key}") found no run to join twice.`);
    }
  }

  async claim(owner: string, leaseMs: number, limit: number, workflows: string[]): Promise<ClaimedRun[]> {
    const rows = await this.db.query<ClaimedRow & { id: string; lateness: number }>(this.sql.claim, [owner, leaseMs, limit, workflows]);
    const answeredAt = Date.now();
    return rows.map((r) => claimedFromRow(r.id, r, answeredAt, Number(r.lateness)));
  }

  /**
   * True when parked; false when the lease is gone, a delivery moved wake_seq, or a run it awaits that
   * is not its child has ended (see parkRunSql).
   */
  async park(run: ClaimedRun, wait: WaitSpec, wakeSeq: string, actor: string, warning: RunWarning | null = null): Promise<boolean> {
    const rows = await retryTransient(() =>
      this.db.query(this.sql.park, [
        run.id,
        run.leaseToken,
        JSON.stringify(wait.reason),
        wait.reason.kind,
        wait.name,
        wait.wakeAt,
        wakeSeq,
        actor,
        warning && JSON.stringify(warning),
        this.sql.queueChannel,
      ]),
    );
    return rows.length > 0;
  }

  async scheduleRetry(run: ClaimedRun, error: ErrorInfo, delayMs: number, actor: string): Promise<boolean> {
    return (
      (
        await retryTransient(() =>
          this.db.query(this.sql.retry, [run.id, run.leaseToken, JSON.stringify(error), delayMs, actor, this.sql.queueChannel]),
        )
      ).length > 0
    );
  }

  /**
   * Renews held leases (skipping rows other transactions hold, see renewLeasesSql); returns the runs
   * still ours, each with whether it was renewed (false: skipped this beat) and its stored deadline,
   * and those cancelled since (`cancelled`).
   * Retried through transient errors and deadlocks for up to `retryWithinMs`.
   */
  async renew(
    owner: string,
    held: Array<{ id: string; token: string }>,
    leaseMs: number,
    detail: object,
    lastSweepAt: Date | null,
    retryWithinMs: number,
  ): Promise<Map<string, RenewedLease>> {
    const rows = await retryTransient(
      () =>
        this.db.query<RenewedLease & { id: string }>(this.sql.renew, [
          owner,
          held.map((h) => h.id),
          held.map((h) => h.token),
          leaseMs,
          JSON.stringify(detail),
          lastSweepAt,
        ]),
      retryWithinMs,
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** Gives runs back (fenced by their tokens, so a try after one that committed releases nothing twice). */
  async release(owner: string, held: Array<{ id: string; token: string }>): Promise<number> {
    if (!held.length) return 0;
    return (
      await retryTransient(() =>
        this.db.query(this.sql.release, [owner, held.map((h) => h.id), held.map((h) => h.token), this.sql.queueChannel]),
      )
    ).length;
  }

  /** At shutdown: the instance executes no workflow any more (its heartbeat's `workflows`, which flagMissing reads). */
  async retire(owner: string): Promise<void> {
    await this.db.query(`UPDATE ${this.db.tables.instances} SET detail = detail - 'workflows' WHERE id = $1`, [owner]);
  }

  /** Waiting runs by reason kind, and runs overdue by more than `overdueMs` (for the metrics' gauges). */
  async waitingFigures(overdueMs: number): Promise<{ waiting: Record<string, number>; overdue: number }> {
    const [row] = await this.db.query<{ waiting: Array<{ kind: string; n: number }>; overdue: number }>(
      `SELECT (SELECT COALESCE(json_agg(json_build_object('kind', wait_kind, 'n', n)), '[]') FROM (
                SELECT wait_kind, count(*)::int AS n FROM ${this.db.tables.runs} WHERE status = 'waiting' GROUP BY wait_kind
                UNION ALL SELECT 'queue', count(*)::int FROM ${this.db.tables.runs} WHERE ${waitingForSql('queue')}) k) AS waiting,
              (SELECT count(*)::int FROM ${this.db.tables.runs} WHERE wake_at < now() - $1 * interval '1 millisecond' AND ${PLAIN_CLAIMABLE}) AS overdue`,
      [overdueMs],
    );
    const waiting = Object.fromEntries(WAIT_KIND_NAMES.map((kind) => [kind, 0]));
    for (const { kind, n } of row.waiting) if (kind) waiting[kind] = n;
    return { waiting, overdue: row.overdue };
  }

  /**
   * Runs due now that this application could claim (pending or waiting, wake time come), but for the
   * pending runs of `heldBack` queues: their queue's limit (its concurrency, its rate window) holds them;
   * nor those whose deadline passed before they began, which no claim takes (the expiry fails them).
   */
  async countDue(workflows: string[], heldBack: string[]): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${this.db.tables.runs}
       WHERE wake_at <= now() AND status IN ('pending', 'waiting') AND workflow = ANY($1::text[])
         AND NOT (status = 'pending' AND COALESCE(queue = ANY($2::text[]), false)) AND ${notUnbegunPastDeadlineSql('now()')}`,
      [workflows, heldBack],
    );
    return row.n;
  }

  /**
   * The workflow and status of a run, without its payloads, and its parent; `beforeParent`: the run is older
   * than the run its parent id names now (a child of an earlier run under that id, which retention deleted).
   */
  async brief(runId: string, manager?: EntityManager): Promise<RunBrief | undefined> {
    const rows = await this.db.query<RunBrief>(
      `SELECT r.workflow, r.status, r.parent_id AS "parentId", r.parent_step AS "parentStep",
              EXISTS (SELECT 1 FROM ${this.db.tables.runs} p WHERE p.id = r.parent_id AND p.created_at > r.created_at) AS "beforeParent"
       FROM ${this.db.tables.runs} r WHERE r.id = $1`,
      [runId],
      manager,
    );
    return rows[0];
  }

  async get(runId: string): Promise<RunView | undefined> {
    const rows = await this.db.query<RunRecord>(`SELECT ${RUN_COLUMNS} FROM ${this.db.tables.runs} WHERE id = $1`, [runId]);
    return rows[0] && toRunView(rows[0]);
  }

  /** Newest first; `maxLimit` is 500 for callers, more only for the dashboard's bulk actions. */
  async list(
    filter: RunFilter & { q?: string; waitingName?: string } = {},
    maxLimit = 500,
  ): Promise<{ runs: RunView[]; nextCursor?: string }> {
    const { where, params, param } = runConditions(filter);
    const sort = filter.sort ?? 'created';
    const order = filter.order ?? 'desc';
    if (sort !== 'created' && sort !== 'updated')
      throw new InvalidArgumentError(`sort must be "created" or "updated"; got "${String(sort)}".`);
    if (order !== 'desc' && order !== 'asc') throw new InvalidArgumentError(`order must be "desc" or "asc"; got "${String(order)}".`);
    const before = order === 'desc' ? '<' : '>';
    if (filter.cursor !== undefined) {
      const cursor = parseRunCursor(filter.cursor);
      if (!cursor || (sort === 'updated') !== (cursor.updatedMicros !== undefined))
        throw new InvalidArgumentError(`cursor "${filter.cursor}" is not a cursor returned by listRuns with this sort.`);
      // Keyset paging: the rows after the last one shown, in the page's order (seq breaks ties).
      if (cursor.updatedMicros === undefined) where.push(`seq ${before} ${param(cursor.seq)}::bigint`);
      else where.push(`(${UPDATED_MICROS}, seq) ${before} (${param(cursor.updatedMicros)}::bigint, ${param(cursor.seq)}::bigint)`);
    }
    const limit = filter.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit)
      throw new InvalidArgumentError(`limit must be a whole number from 1 to ${maxLimit}; got ${filter.limit}.`);
    const direction = order.toUpperCase();
    const orderBy = sort === 'created' ? `seq ${direction}` : `${UPDATED_MICROS} ${direction}, seq ${direction}`;
    const rows = await this.db.query<RunRecord & { updated_micros: string }>(
      `SELECT ${RUN_COLUMNS}, ${UPDATED_MICROS}::text AS updated_micros FROM ${this.db.tables.runs}
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${orderBy} LIMIT ${param(limit + 1)}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor = rows.length > limit ? (sort === 'created' ? last.seq : `${last.updated_micros}_${last.seq}`) : undefined;
    return { runs: page.map(toRunView), nextCursor };
  }

  /**
   * How many runs match `filter` (its paging options aside): exact up to `exactUpTo`, the planner's
   * estimate past it (`estimated`), so the count costs the same at a million runs as at a hundred.
   */
  async count(filter: RunFilter & { q?: string; waitingName?: string }, exactUpTo: number): Promise<{ count: number; estimated: boolean }> {
    const { where, params, param } = runConditions(filter);
    const condition = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [row] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${this.db.tables.runs} ${condition} LIMIT ${param(exactUpTo + 1)}) r`,
      params,
    );
    if (row.n <= exactUpTo) return { count: row.n, estimated: false };
    // EXPLAIN takes no parameters: the plan's estimate of the same statement with its values inlined.
    const plan = await this.db.query<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(
      `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${this.db.tables.runs} ${condition.replace(/\$(\d+)/g, (_, i) => inlined(params[Number(i) - 1]))}`,
    );
    return { count: Math.max(exactUpTo + 1, Math.round(plan[0]['QUERY PLAN'][0].Plan['Plan Rows'])), estimated: true };
  }
}

/** `updated_at` as whole microseconds since the epoch: what a cursor of the `updated` order holds. */
const UPDATED_MICROS = `(extract(epoch FROM updated_at) * 1000000)::bigint`;

/** A cursor of listRuns: a seq (by creation), or `<updated µs>_<seq>` (by last change). */
function parseRunCursor(cursor: string): { seq: string; updatedMicros?: string } | undefined {
  if (isRunCursor(cursor)) return { seq: cursor };
  const [updatedMicros, seq, ...rest] = cursor.split('_');
  return !rest.length && isRunCursor(updatedMicros) && isRunCursor(seq) ? { seq, updatedMicros } : undefined;
}

/** A value as a literal for EXPLAIN: text quoted, a list as a text array, a date as its ISO text. */
function inlined(value: unknown): string {
  const text = (v: string) => `'${v.replace(/'/g, "''")}'`;
  if (Array.isArray(value)) return `ARRAY[${value.map((v) => text(String(v))).join(', ')}]::text[]`;
  if (value instanceof Date) return text(value.toISOString());
  return text(String(value));
}

/** The WHERE conditions of a run filter (its paging aside), each value a parameter; bad values refused by name. */
function runConditions(filter: RunFilter & { q?: string; waitingName?: string }) {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const statuses = filter.status === undefined ? [] : Array.isArray(filter.status) ? filter.status : [filter.status];
  for (const status of statuses) {
    if (!RUN_STATUSES.includes(status))
      throw new InvalidArgumentError(`Unknown status "${String(status)}"; use one of ${RUN_STATUSES.join(', ')}.`);
  }
  if (statuses.length) where.push(`${listedStatus()} = ANY(${param(statuses)}::text[])`);
  if (filter.workflow) where.push(`workflow = ${param(filter.workflow)}`);
  if (filter.waitingFor) {
    if (!isWaitKind(filter.waitingFor))
      throw new InvalidArgumentError(`Unknown wait kind "${String(filter.waitingFor)}"; use one of ${WAIT_KIND_NAMES.join(', ')}.`);
    // A run waiting for a queue's slot is pending: its reason is read, not stored (see QueueReasons).
    where.push(waitingForSql(filter.waitingFor)); // a registered kind: written in as a literal
  }
  if (filter.waitingName) {
    // Or an arm of a parked select (its wait_name is null): the signal or channel of that name.
    const name = param(filter.waitingName);
    where.push(`(wait_name = ${name} OR wait->'arms' @> jsonb_build_array(jsonb_build_object('name', ${name}::text)))`);
  }
  if (filter.schedule) where.push(`starts_with(id, ${param(`schedule:${filter.schedule}:`)})`);
  if (filter.queue) where.push(`queue = ${param(filter.queue)}`);
  if (filter.forkedFrom) where.push(`forked_from = ${param(filter.forkedFrom)}`);
  if (filter.keys !== undefined) where.push(`keys @> ${param(JSON.stringify(checkKeys(filter.keys, 'The keys filter', true)))}::jsonb`);
  for (const [field, value] of Object.entries({
    workflow: filter.workflow,
    waitingName: filter.waitingName,
    q: filter.q,
    schedule: filter.schedule,
    queue: filter.queue,
    forkedFrom: filter.forkedFrom,
  })) {
    if (typeof value === 'string' && !isStorableText(value))
      throw new InvalidArgumentError(`The ${field} filter cannot hold a NUL character or a lone surrogate.`);
  }
  if (filter.q) where.push(`id LIKE ${param(`${filter.q.replace(/[\\%_]/g, '\\$&')}%`)}`);
  for (const [field, column, op] of [
    ['createdAfter', 'created_at', '>='],
    ['createdBefore', 'created_at', '<'],
    ['updatedAfter', 'updated_at', '>='],
    ['updatedBefore', 'updated_at', '<'],
  ] as const) {
    const value = filter[field];
    if (value === undefined) continue;
    if (!(value instanceof Date) || Number.isNaN(value.getTime()))
      throw new InvalidArgumentError(`The ${field} filter must be a valid Date; got ${String(value)}.`);
    where.push(`${column} ${op} ${param(value.toISOString())}::timestamptz`);
  }
  return { where, params, param };
}

const RUN_COLUMNS =
  'id, seq, workflow, status, input, output, error, wait, attempt, parent_id, queue, partition_key, priority, deadline, detached, keys, forked_from, debounce_key, debounce_until, began_at, app_version, warning, created_at, updated_at, finished_at';

interface RunRecord {
  id: string;
  seq: string;
  workflow: string;
  status: RunStatus;
  input: string | null;
  output: string | null;
  error: ErrorInfo | null;
  wait: Record<string, unknown> | null;
  attempt: number;
  parent_id: string | null;
  queue: string | null;
  partition_key: string | null;
  priority: number;
  deadline: Date | null;
  detached: boolean;
  keys: Record<string, string> | null;
  forked_from: string | null;
  debounce_key: string | null;
  debounce_until: Date | null;
  began_at: Date | null;
  app_version: string | null;
  warning: RunWarning | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

const WAIT_DATES = ['since', ...WAIT_TIME_FIELDS];

export function toRunView(r: RunRecord): RunView {
  const view: RunView = {
    runId: r.id,
    workflow: r.workflow,
    status: r.status,
    input: deserialize(r.input),
    attempt: r.attempt,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  if (r.output !== null) view.output = deserialize(r.output);
  if (r.error)
    view.error = {
      name: r.error.name,
      message: r.error.message,
      ...(typeof r.error.stack === 'string' && { stack: r.error.stack }),
      ...(typeof r.error.step === 'string' && { step: r.error.step }),
    };
  if (r.status === 'waiting' && r.wait) {
    const wait: Record<string, unknown> = { ...r.wait };
    for (const key of WAIT_DATES) if (typeof wait[key] === 'string') wait[key] = new Date(wait[key] as string);
    // A select's timer arms hold an instant each.
    if (Array.isArray(wait.arms))
      wait.arms = (wait.arms as Array<Record<string, unknown>>).map((arm) =>
        typeof arm.until === 'string' ? { ...arm, until: new Date(arm.until) } : arm,
      );
    view.waiting = wait as unknown as WaitReason;
  }
  if (r.parent_id) view.parentRunId = r.parent_id;
  if (r.queue) Object.assign(view, { queue: r.queue, priority: r.priority }, r.partition_key ? { partitionKey: r.partition_key } : {});
  if (r.deadline) view.deadline = r.deadline;
  if (r.detached) view.detached = true;
  if (r.keys) view.keys = r.keys;
  if (r.forked_from) view.forkedFrom = r.forked_from;
  if (r.debounce_key !== null)
    view.debounce = {
      key: r.debounce_key,
      // Only while it may still start (runs_debounce_key's predicate): a run cancelled or failed before it began never will.
      ...(r.debounce_until && r.began_at === null && (r.status === 'pending' || r.status === 'waiting') && { startsBy: r.debounce_until }),
    };
  if (r.began_at) view.beganAt = r.began_at;
  if (r.app_version) view.appVersion = r.app_version;
  if (r.warning) view.warning = r.warning;
  if (r.finished_at) view.finishedAt = r.finished_at;
  return view;
}
