import type { Tables } from '../tables';

/**
 * A CTE `freed` for a statement that moves runs off `running` (an end, a park, a retry's backoff): a
 * queued run among them gave its queue's slot back, so when that queue has pending runs its name is
 * NOTIFYed on the queue channel (`channel`, a parameter) and every instance's admission looks at once,
 * instead of at its next sweep. One index probe per queue (runs_queue_pending_idx); `source` is a CTE
 * returning the runs moved, with their `queue`. One row always (a count), so a statement joins it
 * to make it run.
 */
export const queueSlotFreedSql = (t: Tables, source: string, channel: string) => `
freed AS (
  SELECT count(pg_notify(${channel}, s.queue)) AS notified
  FROM (SELECT DISTINCT queue FROM ${source} WHERE queue IS NOT NULL) s
  WHERE EXISTS (SELECT 1 FROM ${t.runs} p WHERE p.queue = s.queue AND p.status = 'pending')
)`;
