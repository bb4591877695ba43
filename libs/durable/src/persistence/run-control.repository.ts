import type { PoolClient } from 'pg';
import { controlChannel, DEADLINE_PASSED_KEY, queueChannel, wakeChannel } from '../durable.constants';
import { forkRunSql } from './sql/fork-run.sql';
import { InvalidTransitionError, RunNotFoundError } from '../errors';
import { DurableDatabase, READ_COMMITTED } from './durable-database';
import type { Tables } from './tables';
import { retryRolledBack } from './transient-retry';
import { queueSlotFreedSql } from './sql/queue-slot-freed.sql';
import { wakeParentSql } from './sql/wake.sql';
import { resumeFinishesSql, waitKindSql } from './sql/wait-kinds.sql';
import { isoInstantSql } from './sql/iso-instant.sql';
import { unbegunPastDeadlineSql } from './sql/expire-unbegun.sql';

/** What a transition statement answers: the run's status before (null: no such run), and the runs it changed. */
export interface TransitionRow {
  previous: string | null;
  changed: string[] | null;
  /** cancelSql: the workflow of each run it cancelled that had not ended (a failed run's end is counted already). */
  ended?: string[] | null;
  /** setDeadlineSql: the deadline the run's attached descendants inherited (its own before the change), as text. */
  inherited?: string | null;
  /** retrySql: the unfinished run of the queue that holds the failed run's deduplication id. */
  heldBy?: string | null;
  /** retrySql: the failed run's deadline, when it has passed (nothing retried). */
  deadlinePassed?: Date | null;
}

/** What attachedAncestorsSql answers for each ancestor. */
interface AncestorRow {
  id: string;
  status: string;
  depth: number;
}

/** What forkRunSql answers. */
interface ForkRow {
  source: boolean;
  step: boolean;
  workflow: string | null;
  goneSpawn: string | null;
  goneChild: string | null;
}

/** What an operator action changed. */
export interface ControlResult {
  /** The run's status before the action. */
  previous: string;
  /** Runs the action changed (for cancel: the run and its cascaded children). */
  changed: string[];
}

/**
 * The operator's transitions: cancel, resume, retry. Each checks and changes the status in one
 * statement (so a racing completion or wake cannot slip between), after the row locks that order it
 * with others (a cancel its run's, a retry its attached ancestors'), writes history with its actor,
 * and NOTIFYs where a run became due.
 */
export class RunControlRepository {
  private readonly sql;

  constructor(private readonly db: DurableDatabase) {
    const t = db.tables;
    this.sql = {
      cancel: cancelSql(t),
      resume: resumeSql(t),
      retry: retrySql(t),
      attachedAncestors: attachedAncestorsSql(t),
      deadline: setDeadlineSql(t),
      clearPassings: clearPassingsSql(t),
      fork: forkRunSql(t),
      channel: wakeChannel(t.schema),
      queueChannel: queueChannel(t.schema),
      controlChannel: controlChannel(t.schema),
    };
  }

  async cancel(runId: string, reason: string | undefined, actor: string): Promise<ControlResult & Pick<CascadeRow, 'ended'>> {
    const params = [
      runId,
      reason ?? 'cancelled',
      actor,
      this.sql.channel,
      reason ?? null,
      this.sql.queueChannel,
      this.sql.controlChannel,
    ] as const;
    const row = await retryRolledBack(() =>
      this.db.transaction((client) => cancelTree(client, this.db.tables, this.sql.cancel, params), READ_COMMITTED),
    );
    return { ...this.check(runId, 'cancel', row, ['pending', 'running', 'waiting', 'failed']), ended: row.ended };
  }

  async resume(runId: string, actor: string): Promise<ControlResult> {
    const [row] = await this.transition(this.sql.resume, [runId, actor, this.sql.channel]);
    // Already on its way (claimed, or waiting but due: resumeSql changed nothing): nothing to end early.
    const onItsWay = row.previous === 'pending' || row.previous === 'running' || (row.previous === 'waiting' && !row.changed?.length);
    if (onItsWay) return { previous: row.previous!, changed: [] };
    return this.check(runId, 'resume', row, ['waiting']);
  }

  async retry(runId: string, actor: string): Promise<ControlResult> {
    const refused = (because: string) => new InvalidTransitionError(runId, 'retry', 'failed', ['failed'], because);
    const held = (by: string) => refused(`${by} holds its deduplication id and has not ended; retry once it has, or cancel it`);
    const { row, cancelled } = await retryRolledBack(() =>
      this.db.transaction(async (client): Promise<{ row: TransitionRow; cancelled?: AncestorRow }> => {
        // The attached ancestors' rows first: a cancel of one waits for this retry, then cancels the run
        // as it does any unfinished descendant; one cancelled already refuses the retry.
        const { rows } = await client.query<AncestorRow>(this.sql.attachedAncestors, [runId]);
        const cancelled = rows.filter((a) => a.status === 'cancelled').sort((a, b) => a.depth - b.depth)[0];
        if (!cancelled) return { row: (await client.query<TransitionRow>(this.sql.retry, [runId, actor, this.sql.channel])).rows[0] };
        // Read after the locks: a run changed while the retry waited (a cancel's cascade) is answered as it is now.
        const [own] = (await client.query<{ status: string }>(`SELECT status FROM ${this.db.tables.runs} WHERE id = $1`, [runId])).rows;
        return { row: { previous: own?.status ?? null, changed: null }, cancelled };
      }, READ_COMMITTED),
    ).catch((error: { code?: string; constraint?: string }) => {
      // A start that took the id after the statement's look (retrySql's `held`) and committed first.
      if (error.code === '23505' && error.constraint === 'runs_deduplication_key') throw held('another run of its queue');
      throw error;
    });
    if (cancelled && row.previous === 'failed')
      throw refused(
        `${cancelled.depth === 1 ? `its parent, run "${cancelled.id}",` : `run "${cancelled.id}", an ancestor it is attached to,`} was cancelled, and an attached child ends with its parent; start the work anew instead`,
      );
    if (row.heldBy) throw held(`run "${row.heldBy}" of its queue`);
    if (row.deadlinePassed)
      throw refused(
        `its deadline (${row.deadlinePassed.toISOString()}) has passed, so the retried run would meet it again at once; move or clear it first (setDeadline), then retry`,
      );
    return this.check(runId, 'retry', row, ['failed']);
  }

  /**
   * Sets or clears (null) the deadline of an unfinished or failed run, and of the attached descendants
   * that had inherited it: at every level, a child whose spawn committed while the change waited for
   * its parent's row follows it too (see cascade).
   */
  async setDeadline(runId: string, deadline: Date | null, actor: string): Promise<ControlResult> {
    const params = [runId, deadline, actor, this.sql.channel, this.sql.controlChannel];
    const row = await retryRolledBack(() =>
      this.db.transaction(async (client) => {
        // The run's row first, so the cascade's snapshot (its children's deadlines, compared with the run's) is taken after the lock.
        await client.query(`SELECT 1 FROM ${this.db.tables.runs} WHERE id = $1 FOR UPDATE`, [runId]);
        const row = await cascade(client, this.sql.deadline, [...params, null], (first) => [...params, first.inherited ?? null]);
        if (row.changed?.length) await client.query(this.sql.clearPassings, [row.changed]);
        return row;
      }, READ_COMMITTED),
    );
    return this.check(runId, 'setDeadline', row, ['pending', 'running', 'waiting', 'failed']);
  }

  /** A fork of `sourceId` from the checkpoint `fromStep` (see forkRunSql): what it found, and the workflow of the fork it created (null: none). */
  async fork(args: {
    sourceId: string;
    fromStep: string;
    forkId: string;
    input: string | null;
    signals: 'before' | 'all';
    actor: string;
    appVersion: string | null;
    timeoutMs: number | null;
    traceContext: string | null;
  }): Promise<{ source: boolean; step: boolean; created: string | null; gone?: { spawn: string; child: string } }> {
    const params = [
      args.sourceId,
      args.fromStep,
      args.forkId,
      args.input,
      args.signals,
      args.actor,
      args.appVersion,
      args.timeoutMs,
      this.sql.channel,
      this.sql.queueChannel,
      args.traceContext,
    ];
    const row = await retryRolledBack(() =>
      this.db.transaction(async (client) => (await client.query<ForkRow>(this.sql.fork, params)).rows[0], READ_COMMITTED),
    );
    const gone = row.goneSpawn === null ? undefined : { spawn: row.goneSpawn, child: row.goneChild! };
    return { source: row.source, step: row.step, created: row.workflow, gone };
  }

  /** One transition statement; a deadlock (the cascade locks children and parents) rolled it back whole, so it is tried again. */
  private transition(sql: string, params: unknown[]) {
    return retryRolledBack(() => this.db.query<TransitionRow>(sql, params));
  }

  private check(runId: string, action: string, row: TransitionRow, allowed: string[]): ControlResult {
    if (row.previous === null) throw new RunNotFoundError(runId);
    if (!row.changed?.length) throw new InvalidTransitionError(runId, action, row.previous, allowed);
    return { previous: row.previous, changed: row.changed };
  }
}

/**
 * An operator's new deadline ($2, null: none) for a run that has not ended (or failed: to retry it
 * under a later one), and for its attached (not detached) unfinished descendants whose deadline was
 * the run's: they had inherited it, and follow it. Each loses a journaled passing of the old deadline
 * (the call that threw waits again: clearPassingsSql), wake_seq moves (an execution about to park
 * re-reads the new deadline instead), and a run parked on a wait the deadline may cap is made due, to park again by
 * the new one (a delayed start keeps its time; a retry backoff wakes at its end or the new deadline). An instant already past counts
 * as now: the run stops gracefully, with its whole grace. Recorded in history. A run executing is named
 * on the control channel: its instance renews its leases at once, and the renewal gives the execution
 * the new deadline (not the interval's next one).
 * $1 run, $2 deadline, $3 actor, $4 wake channel, $5 control channel; in the statements after the first
 * (see cascade), $6 the deadline the descendants inherited (the first's `inherited`: by then the run has
 * the new one) and $7 the runs changed so far, whose attached children that still have $6 follow.
 */
const setDeadlineSql = (t: Tables) => `
WITH RECURSIVE target AS (
  SELECT id, status, deadline FROM ${t.runs} WHERE id = $1 FOR UPDATE
), inherited AS (
  SELECT CASE WHEN cardinality($7::text[]) = 0 THEN (SELECT deadline FROM target) ELSE $6::timestamptz END AS deadline
), tree AS (
  SELECT id FROM ${t.runs}
  WHERE (id = $1 AND cardinality($7::text[]) = 0 AND status IN ('pending', 'running', 'waiting', 'failed'))
     OR (parent_id = ANY($7::text[]) AND NOT id = ANY($7::text[]) AND status IN ('pending', 'running', 'waiting') AND NOT detached
         AND deadline IS NOT DISTINCT FROM (SELECT deadline FROM inherited))
  UNION
  -- Through ended children too (see cancelSql); changed below are only the unfinished.
  SELECT r.id FROM ${t.runs} r JOIN tree ON r.parent_id = tree.id
  WHERE NOT r.detached AND r.deadline IS NOT DISTINCT FROM (SELECT deadline FROM inherited)
), changed AS (
  UPDATE ${t.runs} r
  SET deadline = CASE WHEN $2::timestamptz IS NOT NULL THEN GREATEST($2::timestamptz, now()) END, timeout_ms = CASE WHEN r.id = $1 THEN NULL ELSE r.timeout_ms END, wake_seq = r.wake_seq + 1,
      wake_at = CASE WHEN r.status <> 'waiting' OR r.wait_kind = ${waitKindSql('start')} THEN r.wake_at
                     -- A backoff wakes at its own end or the new deadline, whichever comes first (scheduleRetrySql).
                     WHEN r.wait_kind = ${waitKindSql('retry')} THEN LEAST((r.wait->>'until')::timestamptz, CASE WHEN $2::timestamptz IS NOT NULL THEN GREATEST($2::timestamptz, now()) END)
                     ELSE now() END,
      updated_at = now()
  -- A descendant that ended while this waited for its row is rechecked on its new version and left as it ended.
  WHERE r.id IN (SELECT id FROM tree) AND (r.id = $1 OR r.status IN ('pending', 'running', 'waiting'))
  RETURNING r.id, r.run_day, r.status
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT id, run_day, 'deadline-set', $3,
         jsonb_strip_nulls(jsonb_build_object('from', (SELECT deadline FROM inherited), 'to', CASE WHEN $2::timestamptz IS NOT NULL THEN GREATEST($2::timestamptz, now()) END,
                                              'inheritedFrom', CASE WHEN id = $1 THEN NULL ELSE $1::text END))
  FROM changed
)
SELECT (SELECT status FROM target) AS previous,
       (SELECT array_agg(id) FROM changed) AS changed,
       (SELECT deadline::text FROM inherited) AS inherited,
       (SELECT count(*) FROM changed, pg_notify($4, changed.id) WHERE changed.status IN ('running', 'waiting')) AS woken,
       (SELECT count(*) FROM changed, pg_notify($5, changed.id) WHERE changed.status = 'running' AND octet_length(changed.id) < 8000) AS told`;

/**
 * The journaled passings of the old deadline of the runs a deadline change changed ($1), deleted in a
 * statement of their own after the change: every one of those rows is then locked by the change's
 * transaction, so a passing committed while the change waited for a descendant's row (after the
 * change's snapshot) is in this statement's snapshot, and a later one waits for the commit and finds
 * the deadline moved (deadlinePassedSql).
 */
const clearPassingsSql = (t: Tables) => `
DELETE FROM ${t.steps} s USING ${t.runs} r
WHERE r.id = ANY($1::text[]) AND s.run_id = r.id AND s.run_day = r.run_day AND s.key = '${DEADLINE_PASSED_KEY}'`;

/** What a cascade changed: every run, and for a cancel the workflow of each run it ended (runs_ended_total). */
export type CascadeRow = Pick<TransitionRow, 'previous'> & { changed: string[]; ended: string[] };

/**
 * A cancel (cancelSql, `params` from its $1 the run) in the caller's READ COMMITTED transaction, the run's
 * row locked first, so the cascade's snapshot has its status after the lock: a run that ended while the
 * cancel waited for it is judged as it ended (completed: the cancel is refused; failed: it is not counted
 * as ended again), and its children are not cancelled from an older snapshot. A retry of a failed
 * descendant relies on that lock too (attachedAncestorsSql): keep it ahead of the cancel's update.
 */
export async function cancelTree(client: PoolClient, t: Tables, sql: string, params: readonly unknown[]): Promise<CascadeRow> {
  await client.query(`SELECT 1 FROM ${t.runs} WHERE id = $1 FOR UPDATE`, [params[0]]);
  return cascade(client, sql, params);
}

/**
 * Changes a run and its attached descendants (a cancel, a deadline) in the caller's transaction, in
 * one or more statements; `sql` takes `params`, then the runs changed so far (empty at first). A child
 * whose spawn committed while a statement waited for its parent's row (the spawn holds it FOR SHARE,
 * to check the parent's lease) is not in that statement's snapshot: the next statement, with a
 * snapshot of its own, changes the children of the runs changed so far, until one finds none.
 * `followUp` gives those statements' params from the first's answer (by default the same). A spawn
 * that comes after its parent's change sees the change. Answers every run changed, and for a cancel the workflow of every run it ended.
 */
export async function cascade(
  client: PoolClient,
  sql: string,
  params: readonly unknown[],
  followUp: (first: TransitionRow) => readonly unknown[] = () => params,
): Promise<CascadeRow> {
  const query = async (p: readonly unknown[], reached: string[]) => (await client.query<TransitionRow>(sql, [...p, reached])).rows[0];
  const first = await query(params, []);
  const rest = followUp(first);
  const changed = [...(first.changed ?? [])];
  const ended = [...(first.ended ?? [])];
  while (changed.length) {
    const more = await query(rest, changed);
    if (!more.changed?.length) break;
    changed.push(...more.changed);
    ended.push(...(more.ended ?? []));
  }
  return { previous: first.previous, changed, ended };
}

/**
 * The cancelled runs wake the runs parked on them that this cancel leaves running: the target's parent,
 * and a fork parked on a cascaded child it reuses (its source's), which would otherwise wait forever. A
 * run the cancel itself ends is left out: a row updated twice in one statement keeps one of the two.
 * $1 run, $2 reason (error message), $3 actor, $4 wake channel, $5 reason as given, $6 queue channel
 * (a queued run cancelled while it executed gives its slot back: queueSlotFreedSql), $7 control channel,
 * $8 the runs this cancel has cancelled in earlier statements (empty at first): their unfinished
 * attached children are cancelled too (see RunControlRepository.cancel). Each run cancelled is named on
 * the control channel (whatever its status in this statement's snapshot: a claim may have committed while
 * the statement waited for its row): an instance executing it stops it at once (a renewal it sends then
 * finds the lease gone), not at its next write or its interval's renewal.
 */
export const cancelSql = (t: Tables) => `
WITH RECURSIVE target AS (
  SELECT id, status FROM ${t.runs} WHERE id = $1
), tree AS (
  -- Through ended children too: a child that ended without awaiting its own child left it attached and unfinished.
  SELECT id, status FROM ${t.runs}
  WHERE (id = $1 AND status IN ('pending', 'running', 'waiting', 'failed'))
     OR (parent_id = ANY($8::text[]) AND status IN ('pending', 'running', 'waiting') AND NOT detached)
  UNION
  SELECT r.id, r.status FROM ${t.runs} r JOIN tree ON r.parent_id = tree.id WHERE NOT r.detached
), cancelled AS (
  UPDATE ${t.runs}
  SET status = 'cancelled', error = jsonb_build_object('name', 'CancelledError', 'message', $2::text),
      wait = NULL, wait_kind = NULL, wait_name = NULL, wake_at = NULL, lease_owner = NULL,
      lease_token = lease_token + 1, finished_at = now(), updated_at = now()
  WHERE id IN (SELECT id FROM tree)
    AND (status IN ('pending', 'running', 'waiting') OR (id = $1 AND status = 'failed'))
  RETURNING id, run_day, parent_id, queue, workflow
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT id, run_day, 'cancelled', $3, jsonb_strip_nulls(jsonb_build_object('reason', $5::text, 'cascadedFrom', CASE WHEN id = $1 THEN NULL ELSE $1::text END))
  FROM cancelled
), ${wakeParentSql(t, 'cancelled', { filter: 'NOT EXISTS (SELECT 1 FROM tree WHERE tree.id = p.id)' })}, executed AS (
  SELECT c.id, c.queue FROM cancelled c JOIN tree USING (id) WHERE tree.status = 'running'
  UNION ALL
  -- A run cancelled by an earlier statement ($8) that holds a slot: pending in that statement's snapshot,
  -- it was admitted while the statement waited on its row, and only a later snapshot (this one: see
  -- cascade, which makes this statement again after any that cancelled) sees its slot.
  SELECT r.id, r.queue FROM ${t.runs} r
  WHERE r.id = ANY($8::text[]) AND r.queue IS NOT NULL AND EXISTS (SELECT 1 FROM ${t.queueSlots} s WHERE s.holder = r.id)
), ${queueSlotFreedSql(t, 'executed', '$6')}
SELECT (SELECT status FROM target) AS previous,
       (SELECT array_agg(id) FROM cancelled) AS changed,
       -- Every run but the target was unfinished (the update takes no other); the target, unless it had failed.
       (SELECT array_agg(workflow) FROM cancelled WHERE id <> $1 OR (SELECT status FROM target) <> 'failed') AS ended,
       (SELECT count(*) FROM parent, pg_notify($4, parent.id)) AS woken,
       (SELECT count(*) FROM cancelled c, pg_notify($7, c.id) WHERE octet_length(c.id) < 8000) AS told,
       (SELECT notified FROM freed) AS freed`;

/**
 * Ends a wait early: the run is due now. For a kind whose resume finishes it (the registry's
 * `resume: 'finish'`), its journaled instant, the step its wait_name keys, becomes now, so the
 * replay does not park again; any other kind is re-invoked and parks again if nothing came. A run
 * due already (resumed a moment ago, signalled, its instant past) is on its way: nothing changes and
 * nothing is recorded (concurrent resumes record one `resumed`), and it is NOTIFYed again. Except a
 * journaled instant still ahead: a deadline change makes a sleeping run due only to park again by
 * the new deadline, and a resume then still ends its sleep. Nor is an instant ended once the run's
 * deadline has passed and is not yet met (no passing journaled: no instance executed the run since,
 * or setDeadline moved it to an instant past, clearing the passing): the run is due by its deadline,
 * and the wait throws DeadlineExceededError there as it would have without the resume; ended, the
 * sleep would return and the run go on past its deadline. In the grace, it is ended as before. Nor
 * is a delayed start whose deadline passed before it began made due: it will never begin (the claim
 * passes over it, the sweeper fails it, expireUnbegunSql).
 * $1 run, $2 actor, $3 wake channel.
 */
const resumeSql = (t: Tables) => `
WITH target AS (
  -- clock_timestamp: a resume that waited for this row's lock reads it after the other resume
  -- committed, whose now() (its wake_at) may be later than this statement's now().
  SELECT id, run_day, status, wait_kind, wait_name, status = 'waiting' AND NOT COALESCE(wake_at <= clock_timestamp(), false) AS waits,
         COALESCE(deadline <= clock_timestamp(), false) AND NOT EXISTS (
           SELECT 1 FROM ${t.steps} p WHERE p.run_id = $1 AND p.run_day = r.run_day AND p.key = '${DEADLINE_PASSED_KEY}'
         ) AS deadline_unthrown,
         ${unbegunPastDeadlineSql('clock_timestamp()')} AS unbegun_past_deadline
  FROM ${t.runs} r WHERE id = $1 FOR UPDATE
), instant_ended AS (
  UPDATE ${t.steps} s
  SET result = json_build_object('$t', 'Date', 'v', ${isoInstantSql('now()')})::text
  FROM target
  WHERE target.status = 'waiting' AND ${resumeFinishesSql('target.wait_kind')} AND NOT target.deadline_unthrown
    AND s.run_id = $1 AND s.run_day = target.run_day AND s.key = target.wait_name
    AND (target.waits OR CASE WHEN s.result::jsonb->>'$t' = 'Date' THEN (s.result::jsonb->>'v')::timestamptz > clock_timestamp() ELSE false END)
  RETURNING 1
), resumed AS (
  UPDATE ${t.runs} r SET wake_at = now(), updated_at = now()
  FROM target WHERE r.id = target.id AND (target.waits OR EXISTS (SELECT 1 FROM instant_ended)) AND NOT target.unbegun_past_deadline
  RETURNING r.id, r.run_day, target.wait_kind
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail) SELECT id, run_day, 'resumed', $2, jsonb_build_object('waitKind', wait_kind) FROM resumed
)
SELECT (SELECT status FROM target) AS previous,
       (SELECT array_agg(id) FROM resumed) AS changed,
       -- A due run is NOTIFYed too: an operator's resume of one no instance claimed yet brings the claim now
       -- (not one that will never begin: no claim takes it).
       (SELECT count(*) FROM target, pg_notify($3, target.id) WHERE target.status = 'waiting' AND NOT target.unbegun_past_deadline) AS woken`;

/**
 * $1's attached ancestors (its parent, unless $1 is detached; that one's parent, unless it is detached;
 * …) that exist, with their status and how many levels up each is: a cancel of any of them reaches $1
 * while it is unfinished. FOR KEY SHARE: the FOR UPDATE a cancel takes on its run first (cancelTree)
 * waits for this retry, or this retry for it, then reads the cancelled row; the wakes and parks of a
 * running ancestor (no key changed) are not held up. In id order, as finishRunsSql locks its batch.
 */
const attachedAncestorsSql = (t: Tables) => `
WITH RECURSIVE chain AS (
  SELECT parent_id AS id, 1 AS depth FROM ${t.runs} WHERE id = $1 AND parent_id IS NOT NULL AND NOT detached
  UNION ALL
  SELECT r.parent_id, chain.depth + 1 FROM ${t.runs} r JOIN chain ON r.id = chain.id WHERE r.parent_id IS NOT NULL AND NOT r.detached
)
SELECT r.id, r.status, chain.depth FROM ${t.runs} r JOIN chain USING (id) ORDER BY r.id FOR KEY SHARE OF r`;

/**
 * Runs a failed run again from its checkpoints: stored permanent step failures are cleared so those
 * steps run again, and the retry budget starts afresh. $1 run, $2 actor, $3 wake channel.
 */
const retrySql = (t: Tables) => `
WITH target AS (
  SELECT id, run_day, status, queue, deduplication_id, deadline FROM ${t.runs} WHERE id = $1 FOR UPDATE
), passed AS (
  -- A deadline already passed would fail the retried run at once: refused, for the operator to move or clear it first.
  SELECT deadline FROM target WHERE status = 'failed' AND deadline <= now()
), held AS (
  -- A newer unfinished run of the queue with the failed run's deduplication id: both unfinished would break runs_deduplication_key.
  SELECT h.id FROM target, LATERAL (
    SELECT h.id FROM ${t.runs} h
    WHERE h.queue = target.queue AND h.deduplication_id = target.deduplication_id AND h.id <> target.id
      AND h.status IN ('pending', 'running', 'waiting')
    LIMIT 1
  ) h
  WHERE target.status = 'failed' AND target.deduplication_id IS NOT NULL
), cleared AS (
  DELETE FROM ${t.steps} s USING target
  WHERE target.status = 'failed' AND NOT EXISTS (SELECT 1 FROM held) AND NOT EXISTS (SELECT 1 FROM passed)
    AND s.run_id = $1 AND s.run_day = target.run_day AND s.outcome = 'error'
  RETURNING s.key
), retried AS (
  UPDATE ${t.runs} r
  SET status = 'pending', wake_at = now(), error = NULL, finished_at = NULL, lease_owner = NULL,
      attempt = r.attempt + 1, attempt_base = r.attempt, updated_at = now(),
      -- No longer a debounce's run: a later start with its key makes or joins another (one a start made while it
      -- was failed may hold the key: both not begun would break runs_debounce_key), never replaces its input.
      debounce_key = NULL,
      -- The failed attempt's late writes (a step a deadline left running) are refused from now on, not only from the next claim.
      lease_token = r.lease_token + 1
  FROM target WHERE r.id = target.id AND target.status = 'failed' AND NOT EXISTS (SELECT 1 FROM held) AND NOT EXISTS (SELECT 1 FROM passed)
  RETURNING r.id, r.run_day
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT id, run_day, 'retried', $2, jsonb_build_object('clearedSteps', COALESCE((SELECT jsonb_agg(key) FROM cleared), '[]'::jsonb)) FROM retried
)
SELECT (SELECT status FROM target) AS previous,
       (SELECT array_agg(id) FROM retried) AS changed,
       (SELECT id FROM held) AS "heldBy",
       (SELECT deadline FROM passed) AS "deadlinePassed",
       (SELECT count(*) FROM retried, pg_notify($3, retried.id)) AS woken`;
