import type { Tables } from '../tables';
import { KEY_FORMAT } from '../../durable.constants';
import { CLAIMED_START_FIELDS } from './start-run.sql';

/** A queued start's fields beyond a claimed start's: its queue, the queue's concurrency (null: no limit), priority, and timeoutIncludesQueue. */
export const QUEUED_START_FIELDS = [
  ...CLAIMED_START_FIELDS,
  ['queue', 'text'],
  ['slots', 'int'],
  ['priority', 'int'],
  ['includes_queue', 'boolean'],
] as const;

export type QueuedStartRow = Record<(typeof QUEUED_START_FIELDS)[number][0], unknown>;

/**
 * Inserts a batch of queued starts claimed by their instance (group commit, see RunRepository.start)
 * in one statement and one commit, each as startRunSql inserts a lone one with $3 'running': a run
 * whose queue has no run pending and a free slot for it begins at once in that slot; the others are
 * inserted pending, for admission, and their queues NOTIFYed. Each queue's slots are taken in one call
 * (take_queue_slots, with snapshots of its own, see the queue-slot-batches migration) and handed to
 * the batch's starts of that queue in batch order. A queue without a concurrency begins every start.
 * Ids, duplicates and the lock wait bounded by `lockTimeout` as in startClaimedRunsSql; a start whose
 * id exists takes no slot. Its deadline as startRunSql sets it: a timeout of a run
 * left pending counts from its first execution unless it includes the queue. Returns the inserted
 * runs with their place in the batch and their status.
 * $1: a JSON array of QUEUED_START_FIELDS objects; $2 the queue channel.
 */
export const startQueuedRunsSql = (t: Tables, lockTimeout: string) => `
WITH batch AS (
  SELECT d.*, row_number() OVER (PARTITION BY queue ORDER BY ord) AS place FROM (
    SELECT DISTINCT ON (id) b.* FROM (SELECT set_config('lock_timeout', '${lockTimeout}', true)) bounded,
      jsonb_to_recordset($1::jsonb) AS b(${QUEUED_START_FIELDS.map(([name, type]) => `${name} ${type}`).join(', ')})
    ORDER BY id, ord
  ) d
  -- A start whose id exists inserts nothing: it must not take a slot a later start of its queue would have had.
  -- A probe by key per start (LIMIT keeps it LATERAL): as an anti-join, the plan kept from a small table scans it all.
  -- IS NOT TRUE, not IS NULL: the planner estimates an IS NULL of the outer join's column at one row, and
  -- joined the batch to its inserted runs three times as nested loops (63 × 63 comparisons each).
  LEFT JOIN LATERAL (SELECT true AS found FROM ${t.runs} r WHERE r.id = d.id LIMIT 1) existing ON true
  WHERE existing.found IS NOT TRUE
), open AS (
  -- One probe per queue (LATERAL with LIMIT): as an anti-join, a merge over the pending runs of every queue.
  SELECT wanted.* FROM (
    SELECT queue, max(slots) AS slots, count(*)::int AS wanted FROM batch WHERE slots IS NOT NULL GROUP BY queue
  ) wanted
  LEFT JOIN LATERAL (SELECT true AS found FROM ${t.runs} r WHERE r.queue = wanted.queue AND r.status = 'pending' LIMIT 1) pending ON true
  WHERE pending.found IS NULL
), taken AS (
  SELECT open.queue, s.slot, row_number() OVER (PARTITION BY open.queue ORDER BY s.slot) AS place
  FROM open, LATERAL ${t.queueSlotsTake}(open.queue, open.slots, open.wanted) AS s(slot)
  -- A slot made after this statement began (a raised concurrency) is locked but not visible to \`took\`: left alone.
  WHERE EXISTS (SELECT 1 FROM ${t.queueSlots} made WHERE made.queue = open.queue AND made.slot = s.slot)
), plan AS (
  SELECT b.*, taken.slot, b.slots IS NULL OR taken.slot IS NOT NULL AS begins
  FROM batch b LEFT JOIN taken ON taken.queue = b.queue AND taken.place = b.place
), limited AS (
  SELECT plan.*, NOT begins AND deadline IS NULL AND timeout_ms IS NOT NULL AND NOT includes_queue AS deferred FROM plan
), ins AS (
  INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, lease_owner, lease_token, trace_context, queue, priority, began_at,
                         deadline, timeout_ms, detached, keys, app_version, key_format)
  SELECT id, workflow, CASE WHEN begins THEN 'running' ELSE 'pending' END, input,
         CASE WHEN begins THEN now() + lease_ms * interval '1 millisecond' ELSE now() END,
         CASE WHEN begins THEN owner END, CASE WHEN begins THEN 1 ELSE 0 END, trace, queue, priority, CASE WHEN begins THEN now() END,
         CASE WHEN NOT deferred THEN COALESCE(deadline, now() + timeout_ms * interval '1 millisecond') END,
         CASE WHEN deferred THEN timeout_ms END, false, keys, app_version, ${KEY_FORMAT}
  FROM limited ORDER BY id
  ON CONFLICT DO NOTHING
  RETURNING id, run_day, status, lease_token, wake_seq, attempt, deadline, queue
), took AS (
  UPDATE ${t.queueSlots} q SET holder = ins.id FROM ins JOIN plan USING (id)
  WHERE q.queue = plan.queue AND q.slot = plan.slot AND ins.status = 'running'
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT ins.id, ins.run_day, 'started', b.actor,
         NULLIF(jsonb_strip_nulls(jsonb_build_object('deadline', ins.deadline, 'timeoutMs', b.timeout_ms,
                                                     'queue', CASE WHEN ins.status = 'running' THEN ins.queue END)), '{}'::jsonb)
  FROM ins JOIN batch b USING (id)
), notified AS (
  SELECT count(*) AS queues FROM (SELECT DISTINCT queue FROM ins WHERE status = 'pending') p, pg_notify($2, p.queue)
)
SELECT b.ord, ins.id, ins.status, ins.lease_token, ins.wake_seq, ins.attempt, ins.deadline FROM ins JOIN batch b USING (id), notified`;
