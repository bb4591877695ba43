import type { Tables } from '../tables';

/**
 * Inserts a run, idempotent on id. $3 'running' inserts it already claimed by $5 (the starting
 * instance executes it at once, no claim round trip); 'pending' makes it due now and NOTIFYs, which
 * Postgres delivers only if and when the surrounding transaction commits.
 * A child ($12, its parent's lease token, set) is inserted only while its parent still holds that
 * token, like every journal write: the FOR SHARE lock holds off a takeover or a cancel until this
 * commits, and a parent taken over or cancelled inserts nothing. One row comes back whatever
 * happened: `admitted` false when the parent's token was stale, `id` null when nothing was inserted.
 * $1 id, $2 workflow, $3 status, $4 input, $5 lease owner, $6 lease ms, $7 parent id, $8 parent step,
 * $9 actor, $10 wake channel, $11 trace context, $12 parent's lease token (null: not a child).
 */
export const startRunSql = (t: Tables) => `
WITH parent AS (
  SELECT 1 FROM ${t.runs} WHERE id = $7 AND lease_token = $12::bigint FOR SHARE
), admitted AS (
  SELECT $12::bigint IS NULL OR EXISTS (SELECT 1 FROM parent) AS admitted
), ins AS (
  INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, lease_owner, lease_token, parent_id, parent_step, trace_context)
  SELECT $1, $2, $3, $4,
         CASE WHEN $3 = 'running' THEN now() + $6 * interval '1 millisecond' ELSE now() END,
         $5, CASE WHEN $3 = 'running' THEN 1 ELSE 0 END, $7, $8, $11
  FROM admitted WHERE admitted
  ON CONFLICT (id) DO NOTHING
  RETURNING id, lease_token, wake_seq, attempt
), history AS (
  INSERT INTO ${t.history} (run_id, event, actor, detail)
  SELECT id, 'started', $9, CASE WHEN $7::text IS NULL THEN NULL ELSE jsonb_build_object('parentRunId', $7::text, 'step', $8::text) END FROM ins
)
SELECT admitted.admitted, ins.*, (SELECT 1 FROM pg_notify($10, ins.id) WHERE $3 = 'pending' AND ins.id IS NOT NULL) AS notified
FROM admitted LEFT JOIN ins ON true`;
