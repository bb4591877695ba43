import type { Tables } from '../tables';
import { queueSlotFreedSql } from './queue-slot-freed.sql';
import { statusIn } from './run-status.sql';

/**
 * Renews the leases an instance holds, and beats its heartbeat, in one statement that never waits on
 * a run's row: rows are locked in id order (one order for every renewal) and a row another
 * transaction holds (an application's open transaction that delivered to the run, a finish waking its
 * parent) is skipped and renewed on the next beat. Returns the runs still holding the token as this
 * statement's snapshot sees them, each saying whether it still runs (not: its execution ended or
 * parked it since the instance listed its leases; every other way off running bumps the token) and
 * whether it was renewed or skipped, with its stored deadline (an operator may set it while the run
 * executes). A run cancelled since comes back `cancelled` (its token bumped once, by the cancel); a
 * run missing from the result is lost (taken over, then maybe cancelled): either way its execution
 * stops, and only a takeover counts as a loss.
 * $1 instance, $2 run ids, $3 tokens, $4 lease ms, $5 instance detail (jsonb), $6 last sweep.
 */
export const renewLeasesSql = (t: Tables) => `
WITH beat AS (
  INSERT INTO ${t.instances} (id, heartbeat_at, detail, last_sweep_at) VALUES ($1, now(), $5::jsonb, $6)
  ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), detail = EXCLUDED.detail, last_sweep_at = EXCLUDED.last_sweep_at
), asked AS (
  SELECT r.id, r.lease_token, r.deadline, r.lease_token = h.token AS ours, ${statusIn('r.', 'running')} AS running,
         -- Cancelled from this lease (a cancel bumps the token once): one taken over first was lost before it.
         r.lease_token = h.token + 1 AND ${statusIn('r.', 'cancelled')} AS cancelled
  FROM ${t.runs} r JOIN unnest($2::text[], $3::bigint[]) AS h(id, token) ON r.id = h.id
), held AS (
  SELECT * FROM asked WHERE ours
), locked AS (
  SELECT r.id FROM ${t.runs} r JOIN held ON r.id = held.id AND r.lease_token = held.lease_token
  WHERE held.running AND ${statusIn('r.', 'running')}
  ORDER BY r.id
  FOR UPDATE OF r SKIP LOCKED
), renewed AS (
  UPDATE ${t.runs} r SET wake_at = now() + $4 * interval '1 millisecond' FROM locked WHERE r.id = locked.id
)
SELECT held.id, held.running, locked.id IS NOT NULL AS renewed, held.deadline, false AS cancelled FROM held LEFT JOIN locked ON locked.id = held.id
UNION ALL
SELECT id, false, false, NULL, true FROM asked WHERE NOT ours AND cancelled`;

/**
 * Gives runs back at shutdown: pending and due now, token bumped so the execution's late writes are
 * refused; a queued one gives its slot back and re-enters its queue's order. $1 instance, $2 run ids,
 * $3 tokens, $4 the queue channel.
 */
export const releaseRunsSql = (t: Tables) => `
WITH given AS (
  UPDATE ${t.runs} r SET status = 'pending', wake_at = now(), lease_owner = NULL, lease_token = r.lease_token + 1, updated_at = now()
  FROM unnest($2::text[], $3::bigint[]) AS held(id, token)
  WHERE r.id = held.id AND r.lease_token = held.token AND ${statusIn('r.', 'running')}
  RETURNING r.id, r.run_day, r.queue
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor) SELECT id, run_day, 'released', $1 FROM given
), ${queueSlotFreedSql(t, 'given', '$4')}
SELECT id FROM given, freed`;
