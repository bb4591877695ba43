import type { Tables } from '../tables';

/**
 * The wake half of deliver-then-wake, as a CTE named `bump` over a CTE `ins` of what was recorded:
 * the run's wake_seq is bumped (so a park racing this delivery re-executes instead), a run parked on
 * this very signal or channel ($2) is made due now, and `wake` says whom to NOTIFY.
 */
export const wakeOnDeliverySql = (t: Tables, kind: 'signal' | 'channel') => `
bump AS (
  UPDATE ${t.runs} r
  SET wake_seq = r.wake_seq + 1,
      wake_at = CASE WHEN r.status = 'waiting' AND r.wait_kind = '${kind}' AND r.wait_name = $2 THEN now() ELSE r.wake_at END
  FROM ins WHERE r.id = $1
  RETURNING r.id, r.status = 'running' OR (r.status = 'waiting' AND r.wait_kind = '${kind}' AND r.wait_name = $2) AS wake
)`;

/**
 * A child's end wakes its parent, as a CTE named `parent` over `source` (rows with a `parent_id`):
 * the parent's wake_seq is bumped whatever it does (a park racing this end re-executes), and a parent
 * parked on a child is made due now. Its ids are the ones to NOTIFY.
 */
export const wakeParentSql = (t: Tables, source: string, filter = 'true') => `
parent AS (
  UPDATE ${t.runs} p
  SET wake_seq = p.wake_seq + 1,
      wake_at = CASE WHEN p.status = 'waiting' AND p.wait_kind = 'child' THEN now() ELSE p.wake_at END
  FROM ${source} c
  WHERE ${filter} AND p.id = c.parent_id AND p.status IN ('waiting', 'running')
  RETURNING p.id
)`;
