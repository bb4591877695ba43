import type { Tables } from '../tables';
import { wakeParentSql } from './wake.sql';
import { isoInstantSql } from './iso-instant.sql';

/** A run that has not begun and has a deadline: one rule for the expiry and for what passes over such runs (the claim, admission, countDue, a debounce). */
const unbegunWithDeadline = (r: string) => `${r}began_at IS NULL AND ${r}deadline IS NOT NULL`;

/**
 * Where expireUnbegunSql finds its runs (the predicate of runs_unbegun_deadline_idx): never begun, with a
 * deadline, pending (in a queue, or for a worker) or waiting (for a delayed start: a run waits for
 * nothing else before it begins).
 */
export const unbegunWithDeadlineSql = (r = '') => `${r}status IN ('pending', 'waiting') AND ${unbegunWithDeadline(r)}`;

/** A run that has not begun and whose deadline passed by `at`: a run expireUnbegunSql fails. */
export const unbegunPastDeadlineSql = (at: string, r = '') => `${unbegunWithDeadline(r)} AND ${r}deadline <= ${at}`;

/**
 * Not a run expireUnbegunSql fails, at `at`: the claim, admission, countDue and a debounce read runs through this,
 * so a run whose deadline passed before it began is left to that statement (between two sweeps, or
 * promoted from a wait in the admission's own pass) instead of beginning past its deadline.
 */
export const notUnbegunPastDeadlineSql = (at: string, r = '') => `NOT (${unbegunPastDeadlineSql(at, r)})`;

/** What failExpiredSql fails, and how it says so. */
interface Expiry {
  /** The FROM list beside the runs table `r`: the rows to fail, and what `where` and `message` read. */
  from: string;
  /** Tested on each locked row (`r`): the row is still one to fail. */
  where: string;
  /** DeadlineExceededError's message, an SQL text expression over `r`. */
  message: string;
  /** The end's instant, and its history row's: in an application's transaction, now() is that transaction's start. */
  at: string;
  actor: string;
  /** No run failed has a parent (a debounced one). */
  parentless?: boolean;
}

/**
 * The CTEs that fail runs a deadline ended that no execution holds, with DeadlineExceededError: `expired`
 * (its id, run_day, parent_id, workflow and error), `expired_history` (the row of each, by `actor`) and
 * wakeParentSql's `parent` (the ids to NOTIFY). No slot to give back: a run not executing holds none.
 */
export const failExpiredSql = (t: Tables, { from, where, message, at, actor, parentless = false }: Expiry) => `
expired AS (
  UPDATE ${t.runs} r
  SET status = 'failed', wait = NULL, wait_kind = NULL, wait_name = NULL, wake_at = NULL, finished_at = ${at}, updated_at = ${at},
      error = jsonb_build_object('name', 'DeadlineExceededError', 'message', ${message})
  FROM ${from} WHERE ${where}
  RETURNING r.id, r.run_day, r.parent_id, r.workflow, r.error
), expired_history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail, at) SELECT id, run_day, 'failed', ${actor}, error, ${at} FROM expired
), ${wakeParentSql(t, 'expired', { parentless })}`;

/**
 * failExpiredSql over the runs of `due` (rows with an `id`, locked or not: each is tested again on its
 * locked row) that have not begun and whose deadline passed by `at`, the message saying where each waited.
 */
export const failUnbegunSql = (t: Tables, due: string, at: string, actor: string, { parentless = false } = {}) =>
  failExpiredSql(t, {
    from: due,
    where: `r.id = ${due}.id AND ${unbegunWithDeadlineSql('r.')} AND r.deadline <= ${at}`,
    message: `format('Run "%s" passed its deadline (%s) while it waited %s, before it began.', r.id, ${isoInstantSql('r.deadline')},
               CASE WHEN r.status = 'waiting' THEN format('for its delayed start (%s)', ${isoInstantSql('r.wake_at')})
                    WHEN r.queue IS NOT NULL THEN format('in queue "%s"', r.queue)
                    ELSE 'for a worker' END)`,
    at,
    actor,
    parentless,
  });

/**
 * Fails with DeadlineExceededError up to $1 runs whose deadline passed before they began, waiting in a
 * queue, for a worker, or for a delayed start (an operator's deadline, or a debounce that moved the start
 * past it). Such a deadline is set at the start (`deadline`, `timeoutIncludesQueue`, or a `timeout`, which
 * counts from creation for a run outside a queue and not delayed), inherited from a parent, or an
 * operator's. Begun now, it would only run its first steps past the deadline until the grace ended
 * it. A run that began and waits for a slot again is not one: it meets its deadline at the wait it
 * resumes, with its grace for cleanup. Locked SKIP LOCKED (a claim, an admission or another instance's
 * pass holds it: left to that one). Each is recorded in its history (actor $2) and its parent woken,
 * NOTIFYed on $3. Answers the workflow of each run failed.
 */
export const expireUnbegunSql = (t: Tables) => `
WITH due AS (
  SELECT id FROM ${t.runs} WHERE ${unbegunWithDeadlineSql()} AND deadline <= now()
  ORDER BY deadline LIMIT $1
  FOR UPDATE SKIP LOCKED
), ${failUnbegunSql(t, 'due', 'now()', '$2')}
SELECT (SELECT array_agg(workflow) FROM expired) AS workflows, (SELECT count(*) FROM parent, pg_notify($3, parent.id)) AS woken`;
