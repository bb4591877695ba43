import type { Tables } from '../tables';
import { queueSlotFreedSql } from './queue-slot-freed.sql';
import { wakeParentSql } from './wake.sql';
import { statusIn } from './run-status.sql';

/**
 * What an end statement may leave out, as ClaimedRun says of its runs: `parentless`, no run has a
 * parent (no parent to wake); `unqueued`, none is queued (no slot to free). Each part left out is also
 * asked of the runs it ends, so a run wrongly said to be such is not ended: its lease lapses and a
 * claim, which reads the row, ends it with the parts the row calls for.
 */
export interface EndParts {
  parentless?: boolean;
  unqueued?: boolean;
}

/** Every EndParts, at its partsIndex: an instance prepares an end statement for each. */
export const END_PARTS: readonly EndParts[] = [{}, { parentless: true }, { unqueued: true }, { parentless: true, unqueued: true }];

/** The place of `parts` in END_PARTS. */
export const partsIndex = ({ parentless, unqueued }: EndParts) => (parentless ? 1 : 0) + (unqueued ? 2 : 0);

/** What an end leaving out `parts` asks of the run it ends; `alias` the runs table's, with its dot. */
const endsOnlySql = ({ parentless, unqueued }: EndParts, alias = '') =>
  `${parentless ? ` AND ${alias}parent_id IS NULL` : ''}${unqueued ? ` AND ${alias}queue IS NULL` : ''}`;

/**
 * The run's last checkpoint, left pending by its execution to ride with the end (see
 * Execution.flushPending): inserted in the end's statement, so only if the end is, in its commit.
 * `source` has the ended runs' id, run_day, and `checkpoint`: null, or the JSON of
 * { key, kind, outcome, result, error, started_at }.
 */
const endCheckpointSql = (t: Tables, source: string) => `checkpoint AS (
  INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result, error, started_at)
  SELECT s.id, s.run_day, c.key, c.kind, c.outcome, c.result, c.error, c.started_at
  FROM ${source} s
  CROSS JOIN LATERAL jsonb_to_record(s.checkpoint) AS c(key text, kind text, outcome text, result text, error jsonb, started_at timestamptz)
  WHERE s.checkpoint IS NOT NULL
  ON CONFLICT (run_id, key, run_day) DO NOTHING
)`;

/**
 * Ends a run (completed or failed) in one statement, fenced by the lease token: the end, its history
 * row, the checkpoint its execution left pending (endCheckpointSql), and the parent's wake. The parent's wake_seq is bumped whatever it does (so a park racing this
 * end re-executes); a parent parked on a child is made due now and NOTIFYed. Idempotent, so it is
 * retried through transient errors: a try after one that landed changes nothing and answers as it did.
 * $1 run, $2 token, $3 status, $4 output, $5 error (jsonb), $6 actor, $7 the deadline's grace in ms
 * when the end is the grace's (null otherwise): then only if the stored deadline, which an operator
 * may have moved, still says so. $8 wake channel, $9 the pending checkpoint (JSON, or null), $10 the
 * queue channel (a queued run's end gives its slot back: queueSlotFreedSql). `parts` (EndParts): what the
 * statement leaves out, for runs known to have no parent or no queue: a run with neither ends in about
 * 40% less time a round trip. Unqueued, it takes $1 to $9.
 */
export const finishRunSql = (t: Tables, parts: EndParts = {}) => `
WITH done AS (
  UPDATE ${t.runs}
  SET status = $3, output = $4, error = $5::jsonb, wait = NULL, wait_kind = NULL, wait_name = NULL,
      wake_at = NULL, lease_owner = NULL, finished_at = now(), updated_at = now()
  WHERE id = $1 AND lease_token = $2 AND ${statusIn('', 'running')}
    AND ($7::bigint IS NULL OR deadline + $7::bigint * interval '1 millisecond' <= now())${endsOnlySql(parts)}
  RETURNING id, run_day, parent_id, queue, $9::jsonb AS checkpoint
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail) SELECT id, run_day, $3, $6, $5::jsonb FROM done
), ${endCheckpointSql(t, 'done')}, ${wakeParentSql(t, 'done', { parentless: parts.parentless })}${parts.unqueued ? '' : `, ${queueSlotFreedSql(t, 'done', '$10')}`}
SELECT done.id, (SELECT count(*) FROM parent, pg_notify($8, parent.id)) AS woken FROM done${parts.unqueued ? '' : ', freed'}
UNION ALL
-- A try after one that committed but whose answer was lost (a cut session): this execution's own write
-- is there already, the only one that moves a run off 'running' without changing its token.
SELECT id, 0 FROM ${t.runs} WHERE id = $1 AND lease_token = $2 AND status <> 'running'`;

/**
 * Ends a batch of runs in one statement and one commit (group commit), each as finishRunSql ends one:
 * fenced by its own token, with its history row, its pending checkpoint and its parent's wake, so a run whose token is stale
 * is not ended while the others are. Runs are locked in id order, one order for every batch, each
 * through a LATERAL probe of the primary key (see checkpointBatchSql), then updated by primary key:
 * a join whose plan follows the table's statistics (a hashed sequential scan while the table is
 * empty), which RunStatisticsService keeps current while the table is young. Not by the locked versions' ctid: a version another
 * transaction wrote after this statement's snapshot (a lease renewal the lock waited for) is invisible
 * to the update's scan, which would change nothing and leave the run running with nobody renewing it;
 * found by key, the snapshot's version leads to the locked one. Returns the ids ended, and those a try
 * that committed had ended already (as finishRunSql answers them), each with the token it was ended
 * under: a batch may hold two ends of one run (a stale execution's and the one that took it over).
 * $1: a JSON array of { id, token, status, output, error, actor, grace_ms, checkpoint } (finishRunSql's
 * $1 to $7 and $9), $2 wake channel, $3 queue channel (not taken `unqueued`). `parts`: as finishRunSql's, of every run of the batch.
 */
export const finishRunsSql = (t: Tables, parts: EndParts = {}) => `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS i(id text, token bigint, status text, output text, error jsonb, actor text, grace_ms bigint, checkpoint jsonb)
  ORDER BY id
), locked AS (
  SELECT i.* FROM input i
  CROSS JOIN LATERAL (
    SELECT 1 FROM ${t.runs} r
    WHERE r.id = i.id AND r.lease_token = i.token AND ${statusIn('r.', 'running')}
      AND (i.grace_ms IS NULL OR r.deadline + i.grace_ms * interval '1 millisecond' <= now())${endsOnlySql(parts, 'r.')}
    FOR UPDATE
  ) held
), done AS (
  UPDATE ${t.runs} r
  SET status = l.status, output = l.output, error = l.error, wait = NULL, wait_kind = NULL, wait_name = NULL,
      wake_at = NULL, lease_owner = NULL, finished_at = now(), updated_at = now()
  FROM locked l
  WHERE r.id = ANY(ARRAY(SELECT id FROM locked)) AND r.id = l.id
  RETURNING r.id, l.token, r.run_day, r.parent_id, r.queue, l.status, l.actor, l.error, l.checkpoint
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail) SELECT id, run_day, status, actor, error FROM done
), ${endCheckpointSql(t, 'done')}, ${wakeParentSql(t, 'done', { parentless: parts.parentless })}, notified AS (
  SELECT count(*) FROM parent, pg_notify($2, parent.id)
)${parts.unqueued ? '' : `, ${queueSlotFreedSql(t, 'done', '$3')}`}
SELECT done.id, done.token FROM done, notified${parts.unqueued ? '' : ', freed'}
UNION ALL
-- LIMIT keeps the probe a LATERAL one (a subquery without it is flattened into a join).
SELECT r.id, i.token FROM input i CROSS JOIN LATERAL (
  SELECT r.id FROM ${t.runs} r WHERE r.id = i.id AND r.lease_token = i.token AND r.status <> 'running' LIMIT 1
) r`;
