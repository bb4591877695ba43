import type { Tables } from '../tables';
import { statusIn } from './run-status.sql';

/**
 * A queue's slots made whole, at boot and in the admission passes the sweeper asks for, in two
 * statements (the second sees what the first changed): the rows up to $2 exist and a slot whose holder
 * no longer executes is free again; then a run that executes holding no slot is given a free one. The
 * statements that move a run off `running` give its slot back themselves, and starts and admissions
 * take one: this repairs what they could not, such as the runs an instance of an older version began
 * or ended during an upgrade (until then such runs can take the queue past its concurrency). A holder
 * is checked by queue_slot_held, with a snapshot of its own: a start that took the slot after this
 * statement's snapshot is seen executing, not freed. $1 queue, $2 its concurrency.
 */
export const mendSlotsSql = (t: Tables): [string, string] => [
  `
WITH made AS (
  -- Only past the highest slot: one index probe when the queue has its slots already.
  INSERT INTO ${t.queueSlots} (queue, slot)
  SELECT $1, n FROM generate_series(COALESCE((SELECT max(slot) FROM ${t.queueSlots} WHERE queue = $1), 0) + 1, $2::int) n
  ON CONFLICT DO NOTHING
)
UPDATE ${t.queueSlots} s SET holder = NULL
WHERE s.queue = $1 AND s.holder IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM ${t.runs} r WHERE r.id = s.holder AND ${statusIn('r.', 'running')})
  AND NOT ${t.queueSlotHeld}(s.holder)`,
  `
WITH orphans AS (
  SELECT id, row_number() OVER (ORDER BY id) AS k FROM ${t.runs} r
  WHERE r.queue = $1 AND r.status = 'running'
    AND NOT EXISTS (SELECT 1 FROM ${t.queueSlots} s WHERE s.queue = $1 AND s.holder = r.id)
), open AS (
  SELECT slot, row_number() OVER (ORDER BY slot) AS k FROM (
    SELECT slot FROM ${t.queueSlots} WHERE queue = $1 AND slot <= $2::int AND holder IS NULL
    ORDER BY slot FOR UPDATE SKIP LOCKED
  ) l
)
UPDATE ${t.queueSlots} s SET holder = o.id
FROM orphans o JOIN open p ON p.k = o.k
WHERE s.queue = $1 AND s.slot = p.slot AND s.holder IS NULL`,
];
