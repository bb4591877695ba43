import type { Tables } from '../tables';
import { KEY_FORMAT } from '../../durable.constants';
import { waitKindSql } from './wait-kinds.sql';
import { statusIn } from './run-status.sql';

/**
 * Inserts a run, idempotent on id. $3 'running' inserts it already claimed by $5 (the starting
 * instance executes it at once, no claim round trip); 'pending' makes it due now and NOTIFYs, which
 * Postgres delivers only if and when the surrounding transaction commits. A pending run is due from the
 * statement's clock (clock_timestamp), not the transaction's start: the runs an application's
 * transaction starts one after another keep their order in line (FIFO within a priority), where one
 * instant for all of them left their ids to order them.
 * A delayed start ($13 an instant, or $14 milliseconds from the database's now()) whose instant is
 * still ahead is inserted `waiting` instead, reason `start`, wake_at at the instant: not claimed, not
 * NOTIFYed; the sweeper (or a wake timer) claims it then. An instant already past starts it as usual.
 * A child ($12, its parent's lease token, set) is inserted only while its parent still holds that
 * token, like every journal write: the FOR SHARE lock holds off a takeover or a cancel until this
 * commits, and a parent taken over or cancelled inserts nothing. One row comes back whatever
 * happened: `admitted` false when the parent's token was stale, `id` null when nothing was inserted.
 * $1 id, $2 workflow, $3 status, $4 input, $5 lease owner, $6 lease ms, $7 parent id, $8 parent step,
 * $9 actor, $10 wake channel, $11 trace context, $12 parent's lease token (null: not a child),
 * $13 start at, $14 start after ms (both null: now), $15 queue, $16 partition key, $17 priority,
 * $18 deduplication id, $19 the queue channel (a new queued run NOTIFYs its queue's name there, not
 * its id on the wake channel). A queued run is never inserted running (the caller passes 'pending': only
 * admission takes a queue's slot); a deduplication id an unfinished run of the queue holds inserts nothing.
 * Its deadline: $20 an instant, or $21 a timeout in ms, counted from now, or, for a queued or delayed
 * run unless $22 (the timeout includes the wait), kept in timeout_ms for the claim that begins it
 * (beginDeadlineSql); a child that is not detached ($23) takes the earlier of its own and its parent's.
 * $24 its business keys (jsonb, null: none), $25 the application's version.
 * A queued run with $3 'running' (a queue without partition or rate limits, see admitsAtStart) begins
 * at once when it can: no run of its queue is pending (it would jump the queue) and it takes a free
 * slot of the first $26 (the queue's concurrency; null: no limit) with SKIP LOCKED (take_queue_slot,
 * which looks with a snapshot of its own: this statement's may predate a slot given back since, and
 * newer starts taking the slots it saw would leave it none), which the statement that ends, parks or
 * cancels the run gives back (its history's `started` names the queue then, as `claimed` does for an
 * admission). No lock serializes such starts. Otherwise it is inserted pending, for admission.
 */
export const startRunSql = (t: Tables) => `
WITH parent AS (
  SELECT deadline FROM ${t.runs} WHERE id = $7 AND lease_token = $12::bigint FOR SHARE
), admitted AS (
  SELECT $12::bigint IS NULL OR EXISTS (SELECT 1 FROM parent) AS admitted
), instant AS (
  -- From this statement's start: in an application's transaction (\`manager\`) now() is that transaction's start.
  SELECT until, until > statement_timestamp() AS delayed
  FROM (SELECT date_trunc('milliseconds', COALESCE($13::timestamptz, statement_timestamp() + $14::bigint * interval '1 millisecond')) AS until) s
), slot AS (
  SELECT slot FROM (
    SELECT ${t.queueSlotTake}($15::text, $26::int) AS slot
    WHERE $15::text IS NOT NULL AND $3 = 'running' AND $26::int IS NOT NULL AND NOT COALESCE((SELECT delayed FROM instant), false)
      AND NOT EXISTS (SELECT 1 FROM ${t.runs} WHERE queue = $15::text AND status = 'pending')
  ) taking
  -- A slot made after this statement began (a raised concurrency) is locked but not visible to \`taken\`: left alone.
  WHERE EXISTS (SELECT 1 FROM ${t.queueSlots} made WHERE made.queue = $15::text AND made.slot = taking.slot)
), plan AS (
  SELECT status, until, delayed,
         $20::timestamptz IS NULL AND $21::bigint IS NOT NULL AND (COALESCE(delayed, false) OR ($15::text IS NOT NULL AND status <> 'running'))
           AND NOT $22::boolean AS deferred
  FROM (
    SELECT CASE WHEN instant.delayed THEN 'waiting'
                WHEN $15::text IS NOT NULL AND $3 = 'running' AND $26::int IS NOT NULL AND NOT EXISTS (SELECT 1 FROM slot) THEN 'pending'
                ELSE $3 END AS status, instant.until, instant.delayed
    FROM instant
  ) s
), limits AS (
  SELECT CASE WHEN plan.deferred THEN $21::bigint END AS timeout_ms,
         LEAST(COALESCE($20::timestamptz, CASE WHEN NOT plan.deferred THEN statement_timestamp() + $21::bigint * interval '1 millisecond' END),
               CASE WHEN NOT $23::boolean THEN (SELECT deadline FROM parent) END) AS deadline
  FROM plan
), ins AS (
  INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, lease_owner, lease_token, parent_id, parent_step, trace_context,
                         wait, wait_kind, queue, partition_key, priority, deduplication_id, began_at, deadline, timeout_ms, detached, keys, app_version, key_format)
  SELECT $1, $2, plan.status, $4,
         CASE WHEN plan.delayed THEN plan.until WHEN plan.status = 'running' THEN now() + $6 * interval '1 millisecond' ELSE clock_timestamp() END,
         CASE WHEN plan.status = 'running' THEN $5::text END, CASE WHEN plan.status = 'running' THEN 1 ELSE 0 END, $7, $8, $11,
         CASE WHEN plan.delayed THEN jsonb_build_object('kind', ${waitKindSql('start')}, 'until', plan.until, 'since', now()) END,
         CASE WHEN plan.delayed THEN ${waitKindSql('start')} END,
         $15::text, $16::text, $17::int, $18::text, CASE WHEN plan.status = 'running' THEN now() END,
         limits.deadline, limits.timeout_ms, $23::boolean, $24::jsonb, $25::text, ${KEY_FORMAT}
  FROM admitted, plan, limits WHERE admitted
  ON CONFLICT DO NOTHING
  RETURNING id, run_day, status, wake_at, lease_token, wake_seq, attempt, deadline
), taken AS (
  UPDATE ${t.queueSlots} q SET holder = ins.id FROM ins, slot
  WHERE q.queue = $15::text AND q.slot = slot.slot AND ins.status = 'running'
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT id, run_day, 'started', $9,
         NULLIF(jsonb_strip_nulls(jsonb_build_object('parentRunId', $7::text, 'step', $8::text,
                                                     'startAt', CASE WHEN ins.status = 'waiting' THEN ins.wake_at END,
                                                     'deadline', ins.deadline, 'timeoutMs', $21::bigint, 'detached', NULLIF($23::boolean, false),
                                                     'queue', CASE WHEN ins.status = 'running' THEN $15::text END)), '{}'::jsonb)
  FROM ins
)
SELECT admitted.admitted, ins.*, (SELECT 1 FROM pg_notify(CASE WHEN $15::text IS NULL THEN $10 ELSE $19 END, COALESCE($15::text, ins.id))
                             WHERE ins.status = 'pending') AS notified
FROM admitted LEFT JOIN ins ON true`;

/** The fields of a start claimed by its instance (startRunSql's $1, $2, $4, $5, $6, $9, $11, $20, $21, $24, $25), with their place in a batch. */
export const CLAIMED_START_FIELDS = [
  ['ord', 'int'],
  ['id', 'text'],
  ['workflow', 'text'],
  ['input', 'text'],
  ['owner', 'text'],
  ['lease_ms', 'bigint'],
  ['actor', 'text'],
  ['trace', 'text'],
  ['deadline', 'timestamptz'],
  ['timeout_ms', 'bigint'],
  ['keys', 'jsonb'],
  ['app_version', 'text'],
] as const;

export type ClaimedStartRow = Record<(typeof CLAIMED_START_FIELDS)[number][0], unknown>;

/** Inserts the starts of the CTE `batch` (CLAIMED_START_FIELDS) claimed, with their `started` rows; returns the inserted ones. */
const insertClaimedSql = (t: Tables) => `
ins AS (
  INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, lease_owner, lease_token, trace_context, began_at, deadline, detached, keys, app_version, key_format)
  SELECT id, workflow, 'running', input, now() + lease_ms * interval '1 millisecond', owner, 1, trace, now(),
         COALESCE(deadline, now() + timeout_ms * interval '1 millisecond'), false, keys, app_version, ${KEY_FORMAT}
  FROM batch ORDER BY id
  ON CONFLICT DO NOTHING
  RETURNING id, run_day, lease_token, wake_seq, attempt, deadline
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT ins.id, ins.run_day, 'started', b.actor,
         NULLIF(jsonb_strip_nulls(jsonb_build_object('deadline', ins.deadline, 'timeoutMs', b.timeout_ms)), '{}'::jsonb)
  FROM ins JOIN batch b USING (id)
)
SELECT b.ord, ins.id, ins.lease_token, ins.wake_seq, ins.attempt, ins.deadline FROM ins JOIN batch b USING (id)`;

/**
 * Inserts one plain start claimed by its instance, as startRunSql would with $3 'running' and no
 * parent, queue, delay or deduplication id, but without the CTEs those need: a third of its server
 * time (the lone write of the start group commit). Nothing when the id exists.
 * $1 … $12: CLAIMED_START_FIELDS in order.
 */
export const startClaimedRunSql = (t: Tables) => `
WITH batch AS (
  SELECT ${CLAIMED_START_FIELDS.map(([name, type], i) => `$${i + 1}::${type} AS ${name}`).join(', ')}
), ${insertClaimedSql(t)}`;

/**
 * Inserts a batch of plain starts already claimed by their instance (group commit of starts, see
 * RunRepository.start) in one statement and one commit, each as startClaimedRunSql inserts one. An id
 * that exists inserts nothing, as for a lone start; an id given twice in the batch is inserted for its
 * first (`ord`). Rows go in id order, one order for every batch, so two batches of concurrent instances
 * that share ids wait on each other's rows in the same order and cannot deadlock. An id another
 * transaction is inserting makes the insert wait for it: `lockTimeout` (set for this statement's own
 * transaction, before the batch is read) bounds that wait, so an uncommitted application transaction
 * holds up its own start, which is then sent alone, and not the batch. Returns the inserted runs with
 * their place in the batch.
 * $1: a JSON array of CLAIMED_START_FIELDS objects.
 */
export const startClaimedRunsSql = (t: Tables, lockTimeout: string) => `
WITH batch AS (
  SELECT DISTINCT ON (id) b.* FROM (SELECT set_config('lock_timeout', '${lockTimeout}', true)) bounded,
    jsonb_to_recordset($1::jsonb) AS b(${CLAIMED_START_FIELDS.map(([name, type]) => `${name} ${type}`).join(', ')})
  ORDER BY id, ord
), ${insertClaimedSql(t)}`;

/**
 * Claims back runs that this instance's claimed starts inserted in a try whose answer was lost (a cut
 * session; the next try found their ids existing): each run still as such a start left it (running,
 * leased to $2 under the first token, with the workflow and input started) takes the next token and a
 * lease of $3 ms, as a claim would give it, so it executes now rather than once that lease lapses.
 * The new token fences out anything else that held the first. An id given twice is claimed back once.
 * $1: a JSON array of { ord, id, workflow, input }. Returns the runs claimed back, with their place.
 */
export const reclaimStartedRunsSql = (t: Tables) => `
UPDATE ${t.runs} r SET lease_token = r.lease_token + 1, wake_at = now() + $3::bigint * interval '1 millisecond', updated_at = now()
FROM jsonb_to_recordset($1::jsonb) AS i(ord int, id text, workflow text, input text)
WHERE r.id = i.id AND r.workflow = i.workflow AND r.input IS NOT DISTINCT FROM i.input
  AND r.lease_owner = $2 AND r.lease_token = 1 AND ${statusIn('r.', 'running')}
RETURNING i.ord, r.id, r.lease_token, r.wake_seq, r.attempt, r.deadline`;
