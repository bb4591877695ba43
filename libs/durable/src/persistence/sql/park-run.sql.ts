import type { Tables } from '../tables';
import { queueSlotFreedSql } from './queue-slot-freed.sql';
import { waitKindSql } from './wait-kinds.sql';
import { statusIn } from './run-status.sql';
import { FINISHED } from './load-journal.sql';

/**
 * The CTE `awaited` of parkRunSql: the runs whose end the park ($3 wait, $4 kind, $5 name) waits on
 * that are not its children (a fork's reused child), locked FOR SHARE in id order (the order of a
 * batch of ends). Such an end wakes the run only if its statement's snapshot holds it
 * (wakeParentSql's reusing_fork), and a fork inserted while the end is in flight is not there. The
 * lock orders the two: an end holding the row makes the park wait for its commit, read the ended
 * status and be refused (the run re-executes and reads the end); a park holding it commits before
 * the end goes on, and the end, whose snapshot holds the fork, re-reads the fork's row and wakes it.
 * Left open: see docs/architecture.md, Parking and the lost wakeup.
 */
const awaitedSql = (t: Tables) => `awaited AS (
  SELECT a.status FROM ${t.runs} a
  WHERE a.id = ANY(CASE $4::text
      WHEN ${waitKindSql('child')} THEN ARRAY[$5::text]
      WHEN ${waitKindSql('select')} THEN ARRAY(SELECT arm ->> 'name' FROM jsonb_array_elements($3::jsonb -> 'arms') arm WHERE arm ->> 'kind' = 'child')
    END)
    AND a.parent_id IS DISTINCT FROM $1
  ORDER BY a.id
  FOR SHARE
)`;

/**
 * Parks a run: waiting, with its reason and wake time, the lease given up. Conditioned on the lease
 * token and on wake_seq, the counter every delivery bumps: a signal, message or child end that
 * committed after this execution's last look makes the park update nothing, and the run re-executes
 * instead of sleeping through its wake (the lost-wakeup race, closed in this one statement). Idempotent,
 * so it is retried through transient errors: a try after one that landed answers as that one did.
 * `since` is kept from the previous park while the run waits for the same thing. A park on the end of
 * a run that is not this run's child (by its wait or a select's arm) is refused once that run has
 * ended (awaitedSql).
 * $1 run, $2 token, $3 wait (jsonb), $4 wait kind, $5 wait name, $6 wake at, $7 wake_seq seen, $8 actor,
 * $9 the run's warning (jsonb; null: none, which clears an earlier one), $10 the queue channel (a parked
 * queued run holds no slot: queueSlotFreedSql).
 */
export const parkRunSql = (t: Tables) => `
WITH ${awaitedSql(t)}, parked AS (
  UPDATE ${t.runs}
  SET status = 'waiting',
      wait = $3::jsonb || jsonb_build_object('since',
               CASE WHEN wait_kind = $4 AND wait_name IS NOT DISTINCT FROM $5 THEN COALESCE(wait->'since', to_jsonb(now())) ELSE to_jsonb(now()) END),
      wait_kind = $4, wait_name = $5, wake_at = $6, lease_owner = NULL, warning = $9::jsonb, updated_at = now()
  WHERE id = $1 AND lease_token = $2 AND wake_seq = $7 AND ${statusIn('', 'running')}
    AND NOT EXISTS (SELECT 1 FROM awaited WHERE status IN ${FINISHED})
  RETURNING id, run_day, wait, queue
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail) SELECT id, run_day, 'parked', $8, wait FROM parked
), ${queueSlotFreedSql(t, 'parked', '$10')}
SELECT id FROM parked, freed
UNION ALL
-- A try after one that committed but whose answer was lost (a cut session): this execution's own write
-- is there already, the only one that moves a run off 'running' without changing its token.
SELECT id FROM ${t.runs} WHERE id = $1 AND lease_token = $2 AND status <> 'running'`;

/**
 * A failed execution with attempts left: waiting, reason retry, attempt + 1, woken after the backoff
 * (its `until`), or at the run's deadline when that comes first: the attempt after it then meets the
 * deadline at its first wait and may clean up in the grace (woken after the grace, the run was only
 * failed). Idempotent like parkRunSql.
 * $1 run, $2 token, $3 error (jsonb), $4 backoff ms, $5 actor, $6 the queue channel.
 */
export const scheduleRetrySql = (t: Tables) => `
WITH parked AS (
  UPDATE ${t.runs}
  SET status = 'waiting', attempt = attempt + 1, error = $3::jsonb,
      wait = jsonb_build_object('kind', ${waitKindSql('retry')}, 'until', now() + $4 * interval '1 millisecond', 'error', $3::jsonb, 'since', now()),
      wait_kind = ${waitKindSql('retry')}, wait_name = NULL, wake_at = LEAST(now() + $4 * interval '1 millisecond', deadline),
      lease_owner = NULL, updated_at = now()
  WHERE id = $1 AND lease_token = $2 AND ${statusIn('', 'running')}
  RETURNING id, run_day, wait, attempt, queue
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail) SELECT id, run_day, 'retry-scheduled', $5, wait || jsonb_build_object('attempt', attempt) FROM parked
), ${queueSlotFreedSql(t, 'parked', '$6')}
SELECT id FROM parked, freed
UNION ALL
-- A try after one that committed but whose answer was lost (a cut session): this execution's own write
-- is there already, the only one that moves a run off 'running' without changing its token.
SELECT id FROM ${t.runs} WHERE id = $1 AND lease_token = $2 AND status <> 'running'`;
