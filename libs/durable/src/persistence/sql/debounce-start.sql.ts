import type { Tables } from '../tables';
import { KEY_FORMAT } from '../../durable.constants';
import { waitKindSql } from './wait-kinds.sql';
import { failUnbegunSql, notUnbegunPastDeadlineSql, unbegunPastDeadlineSql } from './expire-unbegun.sql';

/**
 * A debounced start, one statement. The run of this workflow and key that has not begun (its unique
 * index, runs_debounce_key) takes the new input, and its start moves to now + delay, never past its
 * first start + maxDelay (`debounce_until`, the earliest any of its starts gave); it waits as a delayed start. Without one, a new run is
 * inserted waiting for now + delay. A run being claimed right now has begun once the claim commits:
 * the update then finds nothing, and a new run is inserted. Nor is a run whose deadline passed before
 * it began joined: it will never run, so this statement fails it as the sweeper would (failUnbegunSql,
 * recorded by this start's actor), which frees the key, and a new run is inserted. Failed, not only
 * unkeyed: a claim that read it as due before its deadline, and had not locked it yet, finds it ended
 * when it does, and leaves it (one that locked it first began it: this statement then finds it begun).
 * The id is null only when a concurrent start inserted the key's run between the two halves
 * (the caller tries again); `expired` counts the runs failed, and `woken` the runs awaiting one.
 * $1 new id, $2 workflow, $3 input, $4 key, $5 delay ms, $6 max delay ms (null: none), $7 queue,
 * $8 partition key, $9 priority, $10 actor, $11 trace context; the deadline of a new run: $12 an
 * instant, or $13 a timeout in ms, from its first execution unless $14 (then from now); $15 its
 * business keys (jsonb, null: none), $16 the application's version, $17 the wake channel.
 */
/**
 * The cap of a run a debounced start joins: its own, or the first start + this start's max delay ($6), whichever is
 * earlier (a later start's maxDelay caps the run as the first's would have).
 */
const JOINED_CAP = `LEAST(r.debounce_until, date_trunc('milliseconds', r.created_at + $6::bigint * interval '1 millisecond'))`;

export const debounceStartSql = (t: Tables) => `
WITH instant AS (
  -- From this statement's start, not an application transaction's (see startRunSql).
  SELECT date_trunc('milliseconds', statement_timestamp() + $5::bigint * interval '1 millisecond') AS until
), doomed AS (
  SELECT r.id FROM ${t.runs} r
  WHERE r.workflow = $2 AND r.debounce_key = $4 AND r.status IN ('pending', 'waiting') AND ${unbegunPastDeadlineSql('statement_timestamp()', 'r.')}
), ${failUnbegunSql(t, 'doomed', 'statement_timestamp()', '$10', { parentless: true })}, moved AS (
  UPDATE ${t.runs} r
  SET input = $3, status = 'waiting', wake_at = LEAST(instant.until, COALESCE(${JOINED_CAP}, instant.until)), debounce_until = ${JOINED_CAP},
      wait = jsonb_build_object('kind', ${waitKindSql('start')}, 'until', LEAST(instant.until, COALESCE(${JOINED_CAP}, instant.until)), 'since', now()),
      wait_kind = ${waitKindSql('start')}, updated_at = now()
  FROM instant
  WHERE r.workflow = $2 AND r.debounce_key = $4 AND r.began_at IS NULL AND r.status IN ('pending', 'waiting')
    AND ${notUnbegunPastDeadlineSql('statement_timestamp()', 'r.')}
  RETURNING r.id, r.run_day, r.wake_at
), ins AS (
  INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, wait, wait_kind, queue, partition_key, priority, debounce_key, debounce_until,
                         trace_context, deadline, timeout_ms, keys, app_version, key_format, created_at)
  SELECT $1, $2, 'waiting', $3, instant.until,
         jsonb_build_object('kind', ${waitKindSql('start')}, 'until', instant.until, 'since', now()), ${waitKindSql('start')},
         $7::text, $8::text, $9::int, $4, date_trunc('milliseconds', statement_timestamp() + $6::bigint * interval '1 millisecond'), $11,
         COALESCE($12::timestamptz, CASE WHEN $14::boolean THEN statement_timestamp() + $13::bigint * interval '1 millisecond' END),
         CASE WHEN $12::timestamptz IS NULL AND NOT $14::boolean THEN $13::bigint END, $15::jsonb, $16::text, ${KEY_FORMAT},
         -- The first start's instant, which the caps count from (JOINED_CAP): the statement's, as the cap's, not its transaction's.
         statement_timestamp()
  -- After the doomed run's end (the subquery is evaluated before the insert; were it not, the key's conflict costs the caller's one retry).
  FROM instant WHERE NOT EXISTS (SELECT 1 FROM moved) AND (SELECT count(*) FROM expired) >= 0
  ON CONFLICT DO NOTHING
  RETURNING id, run_day, wake_at
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT id, run_day, 'started', $10, jsonb_build_object('startAt', wake_at, 'debounce', $4::text) FROM ins
  UNION ALL
  SELECT id, run_day, 'debounced', $10, jsonb_build_object('startAt', wake_at, 'debounce', $4::text) FROM moved
)
SELECT started.id, started.wake_at, started.created, (SELECT count(*) FROM expired) AS expired,
       (SELECT count(*) FROM parent, pg_notify($17, parent.id)) AS woken
FROM (SELECT 1) one LEFT JOIN (
  SELECT id, wake_at, false AS created FROM moved
  UNION ALL
  SELECT id, wake_at, true AS created FROM ins
) started ON true`;
