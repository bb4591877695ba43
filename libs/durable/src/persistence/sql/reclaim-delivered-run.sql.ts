import { runDaySql } from '../journal-partitions';
import type { Tables } from '../tables';
import { statusIn } from './run-status.sql';

/**
 * Claims back the run a delivery call of this instance claimed in a try whose answer was lost (a cut
 * session; the next try found the delivery recorded, and claimed nothing): the run is still as that
 * claim left it, running and leased to $2 under the token its history row names, the row of this
 * call ($4, claimHistorySql), so no claim has moved it since and nothing executes it. It takes the next
 * token, which fences out that first one, and a lease of $3 ms, as reclaimStartedRunsSql does for a
 * start, so it executes now rather than once the lost claim's lease lapses. Its journal is read anew
 * by the execution (`current` false). $1 run.
 */
export const reclaimDeliveredRunSql = (t: Tables) => `
WITH claim AS (
  SELECT (h.detail->>'token')::bigint AS token FROM ${t.history} h
  WHERE h.run_id = $1 AND h.run_day = ${runDaySql(t, '$1')} AND h.event = 'claimed' AND h.actor = $2
    AND h.detail @> jsonb_build_object('delivery', $4::text)
)
UPDATE ${t.runs} r SET lease_token = r.lease_token + 1, wake_at = now() + $3::bigint * interval '1 millisecond', updated_at = now()
FROM claim
WHERE r.id = $1 AND ${statusIn('r.', 'running')} AND r.lease_owner = $2 AND r.lease_token = claim.token
RETURNING r.id AS claimed_id, r.workflow, r.input, r.attempt, r.attempt_base, r.lease_token, r.trace_context,
          r.parent_id IS NULL AS parentless, r.queue IS NULL AS unqueued, false AS current`;
