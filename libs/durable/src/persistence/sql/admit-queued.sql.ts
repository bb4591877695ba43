import type { Tables } from '../tables';
import { beginDeadlineSql, BATCH_JOURNAL, journalColumnsSql, journalsOfJoinSql } from './load-journal.sql';
import { notUnbegunPastDeadlineSql } from './expire-unbegun.sql';

/*
 * Admission to a queue: the claim of its pending runs, under the queue's transaction-scoped advisory
 * lock, so that this statement's snapshot (taken after the lock) sees every admission committed
 * before it and two instances never both take the last slot. Counts come from the queue's indexes
 * and are bounded by its limits: running runs (at most `concurrency`), the rate window (at most
 * `limit`). A queue with a concurrency also has its slots as rows (queue_slots), which starts take
 * without the lock (startRunSql): admission takes free ones too, with SKIP LOCKED, so a start and an
 * admission never both take one. A parked run is `waiting`, so it holds no slot; a lapsed lease keeps
 * its slot until the plain claim takes the run over.
 */

/**
 * The advisory locks of these queues, in the order given (the caller sorts them, so two claims never
 * deadlock), as statements without parameters that go out with the transaction's BEGIN. Queue names
 * are checked at boot to letters, digits and . _ : - and the schema to an identifier, so they are
 * safe as literals.
 */
export const lockQueuesSql = (schema: string, queues: readonly string[]) =>
  queues.map((queue) => `SELECT pg_advisory_xact_lock(hashtext('nestjs-durable:queue:${schema}:${queue}'))`).join('; ');

/**
 * Sent with the admission transaction's BEGIN: the admission statement (prepared on each connection)
 * runs its generic plan, kept for the connection, not a custom plan made on every call. Postgres chose
 * custom plans for it, whose planning (2.6 to 4.5 ms) was a quarter of the statement's time over a
 * backlog of a million runs, for the same plan: the queue's rows are estimated alike with or without
 * its name, and the queue's limits gate the statement's branches at run time. The plan is made again
 * whenever the runs table's statistics change (an ANALYZE), as every cached plan is.
 */
export const ADMISSION_PLANS_SQL = 'SET LOCAL plan_cache_mode = force_generic_plan';

/**
 * The queues (of $1) with work to admit: pending runs, or waiting runs whose time has come (those
 * must first become pending: `due`). One index probe per queue and kind, so an idle queue costs a
 * claim pass next to nothing: LATERAL with LIMIT, not EXISTS, which the planner may hash, reading
 * every pending or waiting run of every queue, when its statistics saw none.
 */
export const queuesWithWorkSql = (t: Tables) => `
SELECT q AS queue, due.found IS NOT NULL AS due FROM unnest($1::text[]) q
LEFT JOIN LATERAL (SELECT true AS found FROM ${t.runs} WHERE queue = q AND status = 'pending' LIMIT 1) pending ON true
LEFT JOIN LATERAL (SELECT true AS found FROM ${t.runs} WHERE queue = q AND status = 'waiting' AND wake_at <= now() LIMIT 1) due ON true
WHERE pending.found OR due.found`;

/**
 * A queued run whose time came (a sleep, a signal's deadline, a delayed start) is due like one a
 * delivery woke: it becomes `pending` and enters the queue's order. $1 queues; at most $2 at a time.
 */
export const promoteDueSql = (t: Tables) => `
UPDATE ${t.runs} r SET status = 'pending', updated_at = now()
WHERE r.id IN (
  SELECT id FROM ${t.runs} WHERE status = 'waiting' AND queue IS NOT NULL AND wake_at <= now() AND queue = ANY($1::text[])
  ORDER BY wake_at LIMIT $2 FOR UPDATE SKIP LOCKED
)`;

/**
 * Admits up to $6 pending runs of queue $1, highest priority (lowest number) first, then first due
 * first. $2 concurrency, $3 partition concurrency, $4 rate limit (each null: none), $5 the rate
 * period in ms, $7 the workflows this instance knows, $8 owner, $9 lease ms, $10 how deep the
 * queue's order is read before partitions are looked at one by one.
 * The head of the queue's order ($10 runs) gives the runs whose partition has room. Only when that
 * head was full and did not fill the free slots (a few partitions at their limit crowd the front of
 * the queue) does each partition with pending runs offer its own head, found by a skip scan over
 * the queue's partition index: a partition with a thousand pending runs cannot hide one with a single
 * run, and the common case (many partitions, evenly spread) reads a bounded range of one index. The
 * runs with no partition key offer theirs from the same index, where they sit under a null key.
 * Runs that have begun before (woken after a park) need a slot but not the rate window. One whose
 * deadline passed before it began is not admitted: the sweeper fails it (expireUnbegunSql).
 * The journal comes with each run, read in this statement's snapshot: `current` only when no delivery
 * moved the run's wake_seq between that snapshot and the row this statement updated. `held_back`
 * (on every row) says a limit left pending runs behind: candidates not claimed (not chosen, or locked
 * by another transaction), or a head read to its limit (more may wait past it), so a slot freeing
 * later is worth another admission.
 */
export const admitQueuedSql = (t: Tables) => `
WITH RECURSIVE clock AS (
  -- The rate window's instant, read as this statement runs, after the queue's lock: now() is the
  -- transaction's start, before a wait for that lock, and runs stamped with it would leave the window early.
  SELECT clock_timestamp() AS at
), counted AS (
  -- Without a concurrency the queue's running runs (on every instance) bound nothing: only the ask does.
  SELECT CASE WHEN $2::int IS NULL THEN $6::int
              ELSE LEAST($6::int, $2::int - (SELECT count(*) FROM ${t.runs} WHERE queue = $1 AND status = 'running')::int)
         END AS n,
         CASE WHEN $4::int IS NULL THEN $6::int
              ELSE $4::int - (SELECT count(*) FROM ${t.runs} WHERE queue = $1 AND began_at > (SELECT at FROM clock) - $5::bigint * interval '1 millisecond')::int
         END AS fresh
), free_slots AS (
  -- No more than there are pending runs to take them: a slot locked here is one a start skips.
  SELECT slot FROM ${t.queueSlots}
  WHERE $2::int IS NOT NULL AND queue = $1 AND slot <= $2::int AND holder IS NULL
  ORDER BY slot
  LIMIT (SELECT count(*) FROM (SELECT 1 FROM ${t.runs} WHERE queue = $1 AND status = 'pending' LIMIT GREATEST((SELECT n FROM counted), 0)) p)
  FOR UPDATE SKIP LOCKED
), room AS (
  SELECT CASE WHEN $2::int IS NULL THEN counted.n ELSE (SELECT count(*)::int FROM free_slots) END AS n, counted.fresh FROM counted
), running_parts AS (
  SELECT partition_key, count(*)::int AS n FROM ${t.runs}
  WHERE queue = $1 AND status = 'running' AND partition_key IS NOT NULL AND $3::int IS NOT NULL GROUP BY partition_key
), head AS (
  SELECT id, partition_key, priority, wake_at, began_at FROM ${t.runs}
  WHERE queue = $1 AND status = 'pending' AND workflow = ANY($7::text[]) AND (began_at IS NOT NULL OR (SELECT fresh FROM room) > 0)
    AND ${notUnbegunPastDeadlineSql('(SELECT at FROM clock)')}
  ORDER BY priority, wake_at LIMIT CASE WHEN $3::int IS NULL THEN GREATEST((SELECT n FROM room), 0) ELSE $10::int END
), head_ok AS (
  SELECT h.id, h.priority, h.wake_at, h.began_at, h.partition_key FROM (
    SELECT head.*, row_number() OVER (PARTITION BY partition_key ORDER BY priority, wake_at, id) AS k FROM head
  ) h LEFT JOIN running_parts rp ON rp.partition_key = h.partition_key
  WHERE $3::int IS NULL OR h.partition_key IS NULL OR h.k + COALESCE(rp.n, 0) <= $3::int
), deeper AS (
  SELECT $3::int IS NOT NULL AND (SELECT count(*) FROM head) = $10::int AND (SELECT count(*) FROM head_ok) < (SELECT n FROM room) AS needed
), parts AS (
  (SELECT partition_key FROM ${t.runs}
   WHERE queue = $1 AND status = 'pending' AND partition_key IS NOT NULL AND (SELECT needed FROM deeper)
   ORDER BY partition_key LIMIT 1)
  UNION ALL
  SELECT (SELECT r.partition_key FROM ${t.runs} r
          WHERE r.queue = $1 AND r.status = 'pending' AND r.partition_key > parts.partition_key
          ORDER BY r.partition_key LIMIT 1)
  FROM parts WHERE parts.partition_key IS NOT NULL
), part_heads AS (
  SELECT c.* FROM parts p LEFT JOIN running_parts rp ON rp.partition_key = p.partition_key, LATERAL (
    SELECT id, priority, wake_at, began_at, partition_key FROM ${t.runs}
    WHERE queue = $1 AND status = 'pending' AND partition_key = p.partition_key AND workflow = ANY($7::text[])
      AND (began_at IS NOT NULL OR (SELECT fresh FROM room) > 0)
      AND ${notUnbegunPastDeadlineSql('(SELECT at FROM clock)')}
    ORDER BY priority, wake_at LIMIT GREATEST(LEAST($3::int - COALESCE(rp.n, 0), (SELECT n FROM room)), 0)
  ) c WHERE p.partition_key IS NOT NULL
), unkeyed_heads AS (
  -- In runs_queue_partition_idx's order (the key is null throughout, so it is the queue's order): the
  -- range of the runs with no key, not the queue's order read through the keyed runs before them.
  SELECT id, priority, wake_at, began_at, partition_key FROM ${t.runs}
  WHERE queue = $1 AND status = 'pending' AND partition_key IS NULL AND workflow = ANY($7::text[]) AND (SELECT needed FROM deeper)
    AND (began_at IS NOT NULL OR (SELECT fresh FROM room) > 0)
    AND ${notUnbegunPastDeadlineSql('(SELECT at FROM clock)')}
  ORDER BY partition_key, priority, wake_at LIMIT GREATEST((SELECT n FROM room), 0)
), offered AS (
  -- The partitions' heads hold no run twice (one head per partition, the unkeyed apart), and only
  -- runs of head_ok to drop: no deduplicating pass over the (usually large) head.
  SELECT * FROM head_ok
  UNION ALL
  SELECT * FROM (SELECT * FROM part_heads UNION ALL SELECT * FROM unkeyed_heads) deep
  WHERE NOT EXISTS (SELECT 1 FROM head_ok h WHERE h.id = deep.id)
), candidates AS (
  -- Where partitions were read one by one, each partition's offered runs are counted against its limit
  -- again: head_ok and a partition's head each keep to it, but runs tied on (priority, wake_at) come in
  -- the index's order, not by id, so the two may hold different runs of a tie and their union pass it.
  -- (id in their ORDER BY would cost each read one more row: the indexes end at wake_at.) head_ok
  -- alone is counted already.
  SELECT id, priority, wake_at, began_at FROM head_ok WHERE NOT (SELECT needed FROM deeper)
  UNION ALL
  SELECT o.id, o.priority, o.wake_at, o.began_at FROM (
    SELECT offered.*, row_number() OVER (PARTITION BY partition_key ORDER BY priority, wake_at, id) AS k FROM offered
  ) o LEFT JOIN running_parts rp ON rp.partition_key = o.partition_key
  WHERE (SELECT needed FROM deeper) AND (o.partition_key IS NULL OR o.k + COALESCE(rp.n, 0) <= $3::int)
), eligible AS (
  -- The first \`room\` runs in order, of which at most \`fresh\` begin now (the rate window): they are
  -- among the first \`room\` runs that began before and the first \`fresh\` that did not. Two
  -- bounded (top-N) sorts of the candidates, where ranking them all took two full sorts.
  (SELECT id, priority, wake_at FROM candidates WHERE began_at IS NOT NULL
   ORDER BY priority, wake_at, id LIMIT GREATEST((SELECT n FROM room), 0))
  UNION ALL
  (SELECT id, priority, wake_at FROM candidates WHERE began_at IS NULL
   ORDER BY priority, wake_at, id LIMIT GREATEST(LEAST((SELECT n FROM room), (SELECT fresh FROM room)), 0))
), chosen AS (
  SELECT id, wake_at FROM eligible ORDER BY priority, wake_at, id LIMIT GREATEST((SELECT n FROM room), 0)
), locked AS (
  -- SKIP LOCKED, as every claim: a chosen run whose row another transaction holds (an application's open
  -- transaction that delivered to it) is left for a later admission (the next claim pass: a sweep, a slot
  -- freeing). Waiting for it would hold the queue's lock, and this instance's claim pass, as long as that transaction.
  SELECT r.id FROM ${t.runs} r WHERE r.id = ANY(ARRAY(SELECT id FROM chosen)) AND r.status = 'pending' ORDER BY r.id FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE ${t.runs} r
  SET status = 'running', lease_owner = $8, lease_token = r.lease_token + 1, deadline = ${beginDeadlineSql('r')},
      began_at = COALESCE(r.began_at, (SELECT at FROM clock)), wake_at = now() + $9 * interval '1 millisecond', updated_at = now()
  FROM chosen
  -- By primary key, one probe per chosen run: a join would let the planner hash the whole backlog.
  WHERE r.id = ANY(ARRAY(SELECT id FROM locked)) AND r.id = chosen.id AND r.status = 'pending'
  RETURNING r.id, r.run_day, r.key_format, r.workflow, r.input, r.attempt, r.attempt_base, r.lease_token, r.trace_context, r.deadline,
            r.parent_id IS NULL AS parentless, extract(epoch FROM now() - chosen.wake_at) AS lateness, r.wake_seq AS latest_seq
), slotted AS (
  -- The claimed runs and the free slots paired in order (there are no more runs than slots): one pass,
  -- where a join of the two numbered lists was planned as a nested loop (estimated at a row each).
  UPDATE ${t.queueSlots} s SET holder = p.id
  FROM unnest(ARRAY(SELECT id FROM claimed ORDER BY id), ARRAY(SELECT slot FROM free_slots ORDER BY slot)) AS p(id, slot)
  WHERE s.queue = $1 AND s.slot = p.slot AND p.id IS NOT NULL
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT id, run_day, 'claimed', $8, jsonb_build_object('from', 'pending', 'queue', $1::text) FROM claimed
)
SELECT c.id, c.workflow, c.input, c.attempt, c.attempt_base, c.lease_token, c.trace_context, c.lateness, c.deadline, c.parentless,
       c.latest_seq = (SELECT wake_seq FROM ${t.runs} WHERE id = c.id) AS current,
       (SELECT count(*) FROM candidates) > (SELECT count(*) FROM claimed)
         OR (SELECT count(*) FROM head) >= CASE WHEN $3::int IS NULL THEN GREATEST((SELECT n FROM room), 0) ELSE $10::int END AS held_back,
       ${journalColumnsSql(t, 'c', BATCH_JOURNAL)}
FROM claimed c ${journalsOfJoinSql(t, 'claimed', 'c.id')}`;
