import type { Tables } from '../tables';
import type { Delivery } from '../../wait-kinds/wait-kind.registry';
import { journalColumnsSql, journalOfSql } from './load-journal.sql';
import { waitKindSql, wokenBySql } from './wait-kinds.sql';
import { statusIn } from './run-status.sql';

/**
 * The wake half of deliver-then-wake, as a CTE `bump` over a CTE `run` (the locked run row as it was,
 * with its row `version`, xmin) and a CTE `ins` of what was recorded. The run's wake_seq is bumped (so
 * a park racing this delivery re-executes instead), and a run parked on a kind this delivery wakes, under its name
 * ($2) or with an arm of this kind and name among its reason's `arms` (a select), is made due now, or, when `owner` is set (the delivering instance has a free slot), claimed by
 * it at once with a fresh lease token (its history row: claimHistorySql); a queued run never is (only
 * admission gives it a slot: it is made due, and the NOTIFY nudges a claim pass). `wake` says whom to NOTIFY:
 * a run executing somewhere, or one parked on this and not claimed here.
 */
export const wakeOnDeliverySql = (t: Tables, kind: Delivery, owner: string, leaseMs: string) => `
bump AS (
  UPDATE ${t.runs} r
  SET wake_seq = r.wake_seq + 1,
      wake_at = CASE WHEN NOT w.parked THEN r.wake_at WHEN w.claim THEN now() + ${leaseMs}::int * interval '1 millisecond' ELSE now() END,
      status = CASE WHEN w.claim THEN 'running' ELSE r.status END,
      lease_owner = CASE WHEN w.claim THEN ${owner}::text ELSE r.lease_owner END,
      lease_token = CASE WHEN w.claim THEN r.lease_token + 1 ELSE r.lease_token END,
      updated_at = CASE WHEN w.claim THEN now() ELSE r.updated_at END
  FROM ins, (
    SELECT parked, parked AND ${owner}::text IS NOT NULL AND queue IS NULL AS claim, status = 'running' AS running
    FROM (SELECT status, queue, status = 'waiting' AND ${wokenBySql('wait_kind', kind)} AND ${parkedOnSql(kind)} AS parked FROM run) s
  ) w
  WHERE r.id = $1
  RETURNING r.id, r.run_day, r.key_format, r.workflow, r.input, r.attempt, r.attempt_base, r.lease_token, r.trace_context, r.wake_seq, r.deadline,
            r.parent_id IS NULL AS parentless, r.queue IS NULL AS unqueued, w.claim AS claimed, w.running OR (w.parked AND NOT w.claim) AS wake
)`;

/**
 * The run waits on this delivery (its name $2): under the wait's own name, or through one of a select's
 * arms. Never null (a select parks without a wait_name): a null would fall through the CASEs below to
 * "due now".
 */
export const parkedOnSql = (kind: Delivery) =>
  `COALESCE(wait_name = $2 OR wait->'arms' @> jsonb_build_array(jsonb_build_object('kind', '${kind}', 'name', $2::text)), false)`;

/**
 * The history row of a claim made by a delivery, as rows to append (UNION ALL) to the delivery's own
 * history insert: one statement inserts them in order, the delivery first. It names the token the
 * claim gave and the delivery call (`call`, a parameter: one id for every try of a call), so a try
 * after one whose answer was lost can claim back what that one claimed (reclaimDeliveredRunSql).
 */
export const claimHistorySql = (kind: Delivery, owner: string, call: string) => `
  UNION ALL SELECT id, run_day, 'claimed', ${owner},
    jsonb_build_object('from', 'waiting', 'by', '${kind}', 'token', lease_token::text, 'delivery', ${call}::text) FROM bump WHERE claimed`;

/**
 * The run a delivery claimed (see wakeOnDeliverySql), with its journal read in the statement's
 * snapshot, as a lateral join: no row, and no journal read, when it claimed nothing. That journal
 * lacks the delivery itself, and it is `current` only when the run row the statement locked is the
 * version its snapshot saw: else a park or another delivery committed in between, and the journal
 * is read afresh. `bumped_seq` is wake_seq after this delivery.
 */
export const claimedByDeliverySql = (t: Tables) => `
LEFT JOIN LATERAL (
  SELECT b.id AS claimed_id, b.workflow, b.input, b.attempt, b.attempt_base, b.lease_token, b.trace_context, b.wake_seq AS bumped_seq, b.deadline, b.parentless, b.unqueued,
         (SELECT xmin::text FROM ${t.runs} WHERE id = b.id) = (SELECT version FROM run) AS current,
         ${journalColumnsSql(t, 'b', journalOfSql(t, 'b.id', 'b.run_day'))}
  FROM bump b WHERE b.claimed
) c ON true`;

/**
 * A child's end wakes its parent, as a CTE named `parent` over `source` (rows with an `id` and a
 * `parent_id`): the parent's wake_seq is bumped whatever it does (a park racing this end re-executes),
 * and a parent parked on a kind a child's end wakes is made due now. So is a run parked on the result
 * of a run it did not start (its wait names the run: a fork reusing its source's child, or a parent
 * whose child's id an earlier start had taken; or a fork's select with an arm on it). Its ids are the
 * ones to NOTIFY. `filter` narrows the source rows; `parentless`: no source row has a parent_id, so the
 * parent's half, which could find nothing, is left out.
 */
export const wakeParentSql = (t: Tables, source: string, { filter = 'true', parentless = false } = {}) =>
  parentless
    ? `${reusingRunSql(t, source, filter, false)}, parent AS (SELECT id FROM reusing_fork)`
    : `
own_parent AS (
  UPDATE ${t.runs} p
  SET wake_seq = p.wake_seq + 1,
      wake_at = CASE WHEN p.status = 'waiting' AND ${wokenBySql('p.wait_kind', 'child-end')} THEN now() ELSE p.wake_at END
  FROM ${source} c
  WHERE ${filter} AND p.id = c.parent_id AND ${statusIn('p.', 'pending', 'waiting', 'running')}
  RETURNING p.id
), ${reusingRunSql(t, source, filter, true)}, parent AS (
  SELECT id FROM own_parent UNION ALL SELECT id FROM reusing_fork
)`;

/**
 * The CTE `reusing_fork` of wakeParentSql: runs parked on the result of a source run that is not their
 * child. Its own update, not an OR in the parent's: each is one index probe (the primary key;
 * runs_waiting_idx), where an OR would read every waiting and running run. A run is never both (its
 * parent is excluded). The probe of runs_waiting_idx is a LATERAL subquery (OFFSET 0 keeps it one):
 * joined plainly, statistics that saw no run waiting let the planner read every waiting run once and
 * join them to the source. The updated row repeats the tests, so a run that moved meanwhile is
 * rechecked on its new version and left alone. With `children` (source rows with a parent), the forks
 * of the ended run's parent, and their forks, parked on a select with an arm on it are found too
 * (runs_forked_from_idx, one probe per level; none for a parent never forked): a select names its arms
 * in its reason, not in wait_name. And every other unfinished one of them has its wake_seq bumped
 * (its wake_at kept: a lease's expiry, or another wait's) and is NOTIFYed, as a child's end does its
 * own parent: one executing that awaits the child in-process re-reads it, and one about to park on it
 * (executing, or claimed while this statement runs: the update's row lock orders the two) re-executes
 * instead, the park being conditioned on wake_seq; unbumped, it parked after the end and waited
 * forever. A fork that does not reuse the child pays one re-execution at its next park, at most.
 */
const reusingRunSql = (t: Tables, source: string, filter: string, children: boolean) => {
  const forks = `
    UNION ALL
    (WITH RECURSIVE forks AS (
       SELECT f.id, f.status, f.wait_kind FROM ${t.runs} f WHERE f.forked_from = c.parent_id
       UNION ALL
       SELECT f.id, f.status, f.wait_kind FROM ${t.runs} f JOIN forks ON f.forked_from = forks.id
     )
     SELECT id FROM forks WHERE status IN ('pending', 'running', 'waiting'))`;
  const armOnIt = `
    OR p.wait_kind = ${waitKindSql('select')} AND p.wait -> 'arms' @> jsonb_build_array(jsonb_build_object('kind', 'child', 'name', c.id))`;
  const parkedOnIt = `${statusIn('p.', 'waiting')} AND (p.wait_kind = ${waitKindSql('child')} AND p.wait_name = c.id${children ? armOnIt : ''})`;
  const unfinishedFork = `
    OR p.forked_from IS NOT NULL AND ${statusIn('p.', 'pending', 'running', 'waiting')}`;
  return `
reusing_fork AS (
  UPDATE ${t.runs} p
  SET wake_seq = p.wake_seq + 1, wake_at = CASE WHEN ${parkedOnIt} THEN now() ELSE p.wake_at END
  FROM ${source} c
  CROSS JOIN LATERAL (
    SELECT w.id FROM ${t.runs} w WHERE w.status = 'waiting' AND w.wait_kind = ${waitKindSql('child')} AND w.wait_name = c.id${children ? forks : ''}
    OFFSET 0
  ) parked
  WHERE ${filter} AND p.id = parked.id AND p.id IS DISTINCT FROM c.parent_id
    AND (${parkedOnIt}${children ? unfinishedFork : ''})
  RETURNING p.id
)`;
};
