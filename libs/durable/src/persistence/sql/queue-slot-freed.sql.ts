import type { Tables } from '../tables';

/**
 * The CTEs `released` and `freed` for a statement that moves runs off `running` (an end, a park, a
 * retry's backoff, a cancel, a release at shutdown): a queued run among them gives its queue's slot
 * back (`released`, which runs whether or not it is referenced), and when that queue has pending runs
 * its name is NOTIFYed on the queue channel (`channel`, a parameter) so that every instance's
 * admission looks at once, instead of at its next sweep. A slot is found by its holder alone, one
 * probe of queue_slots_holder_idx (a run holds a slot of its own queue only): with the queue matched
 * too, the planner ANDed that probe with the queue's whole slice of the primary key. One index probe
 * per queue for the NOTIFY (runs_queue_pending_idx); `source` is a CTE returning the runs moved, with
 * their `id` and `queue`.
 * `freed` is one row always (a count), so a statement joins it to make it run.
 */
export const queueSlotFreedSql = (t: Tables, source: string, channel: string) => `
released AS (
  UPDATE ${t.queueSlots} s SET holder = NULL
  FROM (SELECT id FROM ${source} WHERE queue IS NOT NULL) m
  WHERE s.holder = m.id
), freed AS (
  SELECT count(pg_notify(${channel}, s.queue)) AS notified
  FROM (SELECT DISTINCT queue FROM ${source} WHERE queue IS NOT NULL) s
  CROSS JOIN LATERAL (SELECT 1 FROM ${t.runs} p WHERE p.queue = s.queue AND p.status = 'pending' LIMIT 1) pending
)`;
