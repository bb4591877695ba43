import type { Tables } from '../tables';
import { wakeParentSql } from './wake.sql';

/**
 * Ends a run (completed or failed) in one statement, fenced by the lease token: the end, its history
 * row, and the parent's wake. The parent's wake_seq is bumped whatever it does (so a park racing this
 * end re-executes); a parent parked on a child is made due now and NOTIFYed. Idempotent, so it is
 * retried through transient errors: a try after one that landed changes nothing and answers as it did.
 * $1 run, $2 token, $3 status, $4 output, $5 error (jsonb), $6 actor, $7 wake channel, $8 the
 * deadline's grace in ms when the end is the grace's (null otherwise): then only if the stored
 * deadline, which an operator may have moved, still says so.
 */
export const finishRunSql = (t: Tables) => `
WITH done AS (
  UPDATE ${t.runs}
  SET status = $3, output = $4, error = $5::jsonb, wait = NULL, wait_kind = NULL, wait_name = NULL,
      wake_at = NULL, lease_owner = NULL, finished_at = now(), updated_at = now()
  WHERE id = $1 AND lease_token = $2 AND status = 'running'
    AND ($8::bigint IS NULL OR deadline + $8::bigint * interval '1 millisecond' <= now())
  RETURNING id, parent_id
), history AS (
  INSERT INTO ${t.history} (run_id, event, actor, detail) SELECT id, $3, $6, $5::jsonb FROM done
), ${wakeParentSql(t, 'done')}
SELECT done.id, (SELECT count(*) FROM parent, pg_notify($7, parent.id)) AS woken FROM done
UNION ALL
-- A try after one that committed but whose answer was lost (a cut session): this execution's own write
-- is there already, the only one that moves a run off 'running' without changing its token.
SELECT id, 0 FROM ${t.runs} WHERE id = $1 AND lease_token = $2 AND status <> 'running'`;
