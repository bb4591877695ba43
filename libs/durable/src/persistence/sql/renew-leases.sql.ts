import type { Tables } from '../tables';

/**
 * Renews every lease an instance holds in one statement, and beats its heartbeat. A run missing from
 * the result is no longer ours (its lease was taken over, or it was cancelled): its execution stops.
 * $1 instance, $2 run ids, $3 tokens, $4 lease ms, $5 instance detail (jsonb), $6 last sweep.
 */
export const renewLeasesSql = (t: Tables) => `
WITH beat AS (
  INSERT INTO ${t.instances} (id, heartbeat_at, detail, last_sweep_at) VALUES ($1, now(), $5::jsonb, $6)
  ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), detail = EXCLUDED.detail, last_sweep_at = EXCLUDED.last_sweep_at
)
UPDATE ${t.runs} r SET wake_at = now() + $4 * interval '1 millisecond'
FROM unnest($2::text[], $3::bigint[]) AS held(id, token)
WHERE r.id = held.id AND r.lease_token = held.token AND r.status = 'running'
RETURNING r.id`;

/**
 * Gives runs back at shutdown: pending and due now, token bumped so the execution's late writes are
 * refused. $1 instance, $2 run ids, $3 tokens.
 */
export const releaseRunsSql = (t: Tables) => `
WITH released AS (
  UPDATE ${t.runs} r SET status = 'pending', wake_at = now(), lease_owner = NULL, lease_token = r.lease_token + 1, updated_at = now()
  FROM unnest($2::text[], $3::bigint[]) AS held(id, token)
  WHERE r.id = held.id AND r.lease_token = held.token AND r.status = 'running'
  RETURNING r.id
), history AS (
  INSERT INTO ${t.history} (run_id, event, actor) SELECT id, 'released', $1 FROM released
)
SELECT id FROM released`;
