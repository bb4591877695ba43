import type { Tables } from '../tables';
import { failExpiredSql } from './expire-unbegun.sql';
import { isoInstantSql } from './iso-instant.sql';

/**
 * A run that began, waits pending (for a slot of its queue, woken from a park; or for a worker, given back at a
 * shutdown) and has a deadline: the predicate of runs_begun_pending_deadline_idx.
 */
export const begunPendingWithDeadlineSql = (r = '') => `${r}status = 'pending' AND ${r}began_at IS NOT NULL AND ${r}deadline IS NOT NULL`;

/**
 * Fails with DeadlineExceededError up to $2 runs that began and wait pending while the grace after their deadline
 * ends: no execution holds them to end them there (admitted later, they would only be failed then, their cleanup
 * unrun all the same). $1 the grace of each workflow this instance registers, a JSON array of { workflow, grace_ms }:
 * a run of another workflow is left to an instance that knows its grace. Locked SKIP LOCKED, and tested again on
 * the locked row (an admission that took it first began it: left to its execution). Each is recorded in its history
 * (actor $3) and its parent woken, NOTIFYed on $4 (failExpiredSql, as expireUnbegunSql's). Answers the workflow of each.
 */
/** The run `r`'s grace, its workflow's (`g`), has ended. */
const GRACE_ENDED = `r.deadline + g.grace_ms * interval '1 millisecond' <= now()`;

export const expirePendingPastGraceSql = (t: Tables) => `
WITH grace AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS g(workflow text, grace_ms bigint)
), due AS (
  SELECT r.id FROM ${t.runs} r JOIN grace g ON g.workflow = r.workflow
  WHERE ${begunPendingWithDeadlineSql('r.')} AND ${GRACE_ENDED}
    -- The bound the index ranges over (the other reads each run's grace): only runs past the shortest grace are read.
    AND r.deadline <= now() - (SELECT min(grace_ms) FROM grace) * interval '1 millisecond'
  ORDER BY r.deadline LIMIT $2
  FOR UPDATE OF r SKIP LOCKED
), ${failExpiredSql(t, {
  from: 'due, grace g',
  where: `r.id = due.id AND g.workflow = r.workflow AND ${begunPendingWithDeadlineSql('r.')} AND ${GRACE_ENDED}`,
  message: `format('Run "%s" passed its deadline (%s) and did not end within its grace of %s ms: it waited %s meanwhile.',
               r.id, ${isoInstantSql('r.deadline')}, g.grace_ms,
               CASE WHEN r.queue IS NOT NULL THEN format('for a slot of queue "%s"', r.queue) ELSE 'for a worker' END)`,
  at: 'now()',
  actor: '$3',
})}
SELECT (SELECT array_agg(workflow) FROM expired) AS workflows, (SELECT count(*) FROM parent, pg_notify($4, parent.id)) AS woken`;
