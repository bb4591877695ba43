import { DEADLINE_PASSED_KEY } from '../../durable.constants';
import type { Tables } from '../tables';
import { isoInstantSql } from './iso-instant.sql';

/**
 * Stores one checkpoint, fenced by the lease token: the FOR SHARE lock holds off a claim by another
 * worker until this commits, and a stale token inserts nothing. ON CONFLICT keeps the first writer's row.
 * The statement of a batch of one (a lone write): Postgres plans it in a fraction of the batch's time.
 * $1 run, $2 token, $3 key, $4 kind, $5 outcome, $6 result, $7 error, $8 started at.
 */
export const checkpointSql = (t: Tables) => `
WITH lease AS (SELECT run_day FROM ${t.runs} WHERE id = $1 AND lease_token = $2 FOR SHARE)
INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result, error, started_at)
SELECT $1, run_day, $3, $4, $5, $6, $7, $8 FROM lease
ON CONFLICT (run_id, key, run_day) DO NOTHING
RETURNING run_id, key`;

/**
 * Journals the passing of the run's deadline ($4 the error, with `at`, the key of the call it is thrown
 * at), as checkpointSql would, but only while the stored deadline is still the one the execution loaded
 * ($3, to the millisecond): an operator who moved it meanwhile (setDeadline, which clears a passing it
 * finds) must not have the old one thrown into the code. A passing there already is this execution's,
 * thrown at another wait awaited beside this one (Promise.all): this call's key is added to its `also`,
 * so a re-execution throws at both; a try whose answer was lost adds nothing. Answers whether the lease
 * is held and whether the deadline is the same. $1 run, $2 token.
 */
export const deadlinePassedSql = (t: Tables) => `
WITH run AS (
  SELECT run_day, lease_token = $2 AS held, date_trunc('milliseconds', deadline) IS NOT DISTINCT FROM $3::timestamptz AS same
  FROM ${t.runs} WHERE id = $1 FOR SHARE
), ins AS (
  INSERT INTO ${t.steps} AS s (run_id, run_day, key, kind, outcome, result, error)
  SELECT $1, run_day, '${DEADLINE_PASSED_KEY}', 'deadline-passed', 'error', NULL, $4::jsonb FROM run WHERE held AND same
  ON CONFLICT (run_id, key, run_day) DO UPDATE
  SET error = jsonb_set(s.error, '{also}', COALESCE(s.error->'also', '[]') || jsonb_build_array(EXCLUDED.error->'at'))
  WHERE s.error->'at' <> EXCLUDED.error->'at' AND NOT COALESCE(s.error->'also', '[]') @> jsonb_build_array(EXCLUDED.error->'at')
)
SELECT held, same FROM run`;

/**
 * The CTEs `input`, a batch of journal writes ($1, a JSON array of { run_id, token, key, kind, n } and
 * `columns`) in lock order, and `lease`, those whose run still holds the token, locked FOR SHARE,
 * with the run's day: see checkpointBatchSql.
 */
const leasedBatchSql = (t: Tables, columns: string) => `input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(run_id text, token bigint, key text, kind text, ${columns}, n int)
  ORDER BY run_id, n
), lease AS (
  SELECT i.*, held.run_day FROM input i
  CROSS JOIN LATERAL (SELECT r.run_day FROM ${t.runs} r WHERE r.id = i.run_id AND r.lease_token = i.token FOR SHARE) held
)`;

/**
 * Stores a batch of checkpoints (group commit: one statement, one commit), each fenced by its own lease
 * token: the FOR SHARE lock on the run's row holds off a claim by another worker until this commits,
 * and a row whose token is stale inserts nothing while the others land. Rows are locked in id order,
 * one order for every batch; a run's own rows in the order given (n), so of two writes of one key the
 * first wins, as it would have alone. ON CONFLICT keeps the first writer's row. Returns the rows inserted.
 * $1: a JSON array of the checkpoints. The plan holds as the tables grow: the batch comes as JSON
 * (jsonb_to_recordset is estimated alike for every call, so the prepared statement's plan is cached,
 * where unnest over arrays made each call's custom plan look cheaper and it was planned every time),
 * and each row's run is locked through a LATERAL probe of the primary key (a join could hash a
 * sequential scan of runs, planned while the table was small and kept as it grew).
 */
export const checkpointBatchSql = (t: Tables) => `
WITH ${leasedBatchSql(t, 'outcome text, result text, error jsonb, started_at timestamptz')}
INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result, error, started_at)
SELECT run_id, run_day, key, kind, outcome, result, error, started_at FROM lease
ON CONFLICT (run_id, key, run_day) DO NOTHING
RETURNING run_id, key`;

/**
 * Of the rows of a key read without its run's day, the current run's: the newest day. A run deleted by
 * retention leaves its rows in its day's partitions until the day goes, and a run started later under
 * its id is of a later day (or of the same day, whose rows retention deleted with it).
 */
const CURRENT_RUN_ROW = 'ORDER BY s.run_day DESC LIMIT 1';

/** A timer's stored result: the instant `ms` milliseconds after the database's now, serialized as a Date. */
const timerInstantSql = (ms: string) =>
  `json_build_object('$t', 'Date', 'v', ${isoInstantSql(`now() + ${ms} * interval '1 millisecond'`)})::text`;

/**
 * Journals a timer instant from the database clock, once: now() + $4 ms on first encounter; the
 * stored instant is returned when it exists (read without the run's day, as timerBatchSql reads it).
 * Also returns the database's clock (clock_timestamp(): read as the statement runs, not at its transaction's
 * start or before its lock waits), so the caller knows what remains. $1 run, $2 token, $3 key, $5 kind.
 */
export const timerSql = (t: Tables) => `
WITH lease AS (SELECT run_day FROM ${t.runs} WHERE id = $1 AND lease_token = $2 FOR SHARE),
ins AS (
  INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result)
  SELECT $1, run_day, $3, $5, 'ok', ${timerInstantSql('$4')}
  FROM lease
  ON CONFLICT (run_id, key, run_day) DO NOTHING
  RETURNING result
)
SELECT (SELECT count(*) FROM lease) > 0 AS leased,
       COALESCE((SELECT result FROM ins), (SELECT s.result FROM ${t.steps} s, lease WHERE s.run_id = $1 AND s.key = $3 ${CURRENT_RUN_ROW})) AS result,
       clock_timestamp() AS db_now`;

/**
 * Journals a batch of timers (group commit), each as timerSql does one and fenced by its own token,
 * locked in the checkpoint batch's order. Every instant of the batch counts from its one now(). One
 * row per timer (n): whether its lease held, and its instant (the one inserted, or the one stored;
 * null only when a concurrent writer inserted it while this statement waited, which its snapshot
 * cannot see). $1: a JSON array of { run_id, token, key, kind, ms, n }.
 * The stored instant is read by (run_id, key) without the run's day: pruning the partitions by a day
 * that the subquery takes from its outer row (run-time pruning in a subplan) crashed PostgreSQL 18.4
 * (SIGSEGV in perform_pruning_base_step, in a full run of the suite, whose server log named this statement). Without it the read, which
 * runs only for a key stored already or a lease lost, probes each partition's primary key.
 */
export const timerBatchSql = (t: Tables) => `
WITH ${leasedBatchSql(t, 'ms bigint')}, ins AS (
  INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result)
  SELECT run_id, run_day, key, kind, 'ok', ${timerInstantSql('ms')} FROM lease ORDER BY run_id, n
  ON CONFLICT (run_id, key, run_day) DO NOTHING
  RETURNING run_id, key, result
)
SELECT i.n, l.n IS NOT NULL AS leased,
       COALESCE(ins.result, (SELECT s.result FROM ${t.steps} s WHERE s.run_id = l.run_id AND s.key = l.key ${CURRENT_RUN_ROW})) AS result,
       clock_timestamp() AS db_now
FROM input i LEFT JOIN lease l ON l.n = i.n LEFT JOIN ins ON l.n IS NOT NULL AND ins.run_id = i.run_id AND ins.key = i.key`;

/** After a checkpoint inserted nothing: is the lease still ours, and which row won? $1 run, $2 token, $3 key. */
export const checkpointConflictSql = (t: Tables) => `
SELECT r.lease_token IS NOT DISTINCT FROM $2::bigint AS leased, s.outcome, s.result, s.error
FROM (SELECT 1) one LEFT JOIN ${t.runs} r ON r.id = $1 LEFT JOIN ${t.steps} s ON s.run_id = $1 AND s.run_day = r.run_day AND s.key = $3`;
