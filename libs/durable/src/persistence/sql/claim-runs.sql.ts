import type { Tables } from '../tables';
import { beginDeadlineSql, BATCH_JOURNAL, journalColumnsSql, journalsOfJoinSql } from './load-journal.sql';
import { notUnbegunPastDeadlineSql } from './expire-unbegun.sql';

/**
 * Claims due runs in one statement: pending and waiting runs whose wake time has come, and running
 * runs whose lease lapsed (for a running run wake_at is its lease expiry). Each claim takes a fresh
 * lease token, the fencing token every later write of the execution must present.
 * A queue's pending and waiting runs are not claimed here (they are admitted under the queue's lock,
 * see admit-queued.sql); its running runs are, when their lease lapsed: a takeover keeps the slot.
 * Only workflows this instance knows are claimed, so a run of a workflow removed from the code
 * blocks nothing. A run whose deadline passed before it began is not: the sweeper fails it
 * (expireUnbegunSql). Each run comes with its journal, saving the execution a round trip. It is read in
 * this statement's snapshot, so it is `current` only when the row the claim locked is the version
 * that snapshot saw (nothing committed to the run row in between) and the run was not taken over
 * from a lapsed lease (whose worker may still have checkpointed meanwhile); else it is read afresh.
 * $1 owner, $2 lease ms, $3 batch size, $4 workflow names.
 */
/**
 * The rows of `runs_due_idx`, the predicate every statement over due runs repeats so the planner uses
 * that index: what the plain claim takes when its time comes (a queue's pending and waiting runs wait
 * for admission instead, and are neither claimed here nor overdue).
 */
export const PLAIN_CLAIMABLE = `wake_at IS NOT NULL AND (queue IS NULL OR status = 'running')`;

export const claimRunsSql = (t: Tables) => `
WITH due AS (
  SELECT id, status, lease_owner, wake_at, xmin::text AS version FROM ${t.runs}
  WHERE wake_at <= now() AND ${PLAIN_CLAIMABLE} AND workflow = ANY($4::text[]) AND ${notUnbegunPastDeadlineSql('now()')}
  ORDER BY wake_at
  LIMIT $3
  FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE ${t.runs} r
  SET status = 'running', lease_owner = $1, lease_token = r.lease_token + 1, deadline = ${beginDeadlineSql('r')},
      began_at = COALESCE(r.began_at, now()), wake_at = now() + $2 * interval '1 millisecond', updated_at = now()
  FROM due WHERE r.id = due.id
  RETURNING r.id, r.run_day, r.key_format, r.workflow, r.input, r.attempt, r.attempt_base, r.lease_token, r.trace_context, r.deadline,
            r.parent_id IS NULL AS parentless, r.queue IS NULL AS unqueued, extract(epoch FROM now() - due.wake_at) AS lateness, due.status AS previous_status, due.lease_owner AS previous_owner,
            due.version
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT id, run_day, CASE WHEN previous_status = 'running' THEN 'lease-taken-over' ELSE 'claimed' END, $1,
         jsonb_build_object('from', previous_status, 'previousOwner', previous_owner)
  FROM claimed
)
SELECT c.id, c.workflow, c.input, c.attempt, c.attempt_base, c.lease_token, c.trace_context, c.lateness, c.deadline, c.parentless, c.unqueued,
       c.previous_status <> 'running' AND c.version = (SELECT xmin::text FROM ${t.runs} WHERE id = c.id) AS current,
       ${journalColumnsSql(t, 'c', BATCH_JOURNAL)}
FROM claimed c ${journalsOfJoinSql(t, 'claimed', 'c.id')}`;
