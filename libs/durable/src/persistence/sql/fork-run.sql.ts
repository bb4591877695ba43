import type { Tables } from '../tables';
import { DEADLINE_PASSED_KEY } from '../../durable.constants';

/**
 * A fork in one statement: a new run ($3) of the source's workflow, input ($4 when given, else the
 * source's), keys and queue place, due now, whose journal holds copies of the source's checkpoints
 * recorded before `fromStep`'s ($2, in the journal's order: by when each was recorded, then by key,
 * as the run page lists them), with their instants, so a fork of a fork orders alike. The signals and
 * messages copied are those delivered before that checkpoint ($5 'before') or all of them ('all'); a
 * message acked before it stays acked. Child spawns before it are copied as they are: the fork's
 * handles point at those children. The passing of a deadline is not copied (the fork has its own:
 * $8, the workflow's timeout, from now, or from its first execution in a queue). The source is not
 * written, but for its history row. Nothing happens when the source or the step does not exist, or
 * when a child spawned before the step no longer exists (retention deleted it) and its result is not
 * recorded before the step: `gone` names it. The source and the children it reuses are locked FOR KEY
 * SHARE once they have ended (`src`, `held`; retention deletes no other run), so retention cannot
 * delete one between this check and the commit; a source that retention is deleting is waited for,
 * and then not found. Run in a READ COMMITTED transaction: under repeatable read, a row deleted
 * meanwhile would fail the lock instead of being found gone.
 * $1 source, $2 fromStep, $3 fork id, $4 input, $5 signals, $6 actor, $7 app version, $8 timeout ms,
 * $9 the wake channel, $10 the queue channel, $11 the forking code's trace context (the fork joins its trace).
 */
export const forkRunSql = (t: Tables) => `
WITH ${endedLocked(
  'src',
  `SELECT id, run_day, workflow, input, keys, queue, partition_key, priority, key_format FROM ${t.runs} WHERE id = $1`,
)}, pivot AS (
  SELECT s.finished_at AS at FROM ${t.steps} s, src WHERE s.run_id = $1 AND s.run_day = src.run_day AND s.key = $2
), kids AS (
  SELECT s.key, s.result::jsonb ->> 'runId' AS child FROM ${t.steps} s, src, pivot
  WHERE s.run_id = $1 AND s.run_day = src.run_day AND s.kind = 'child' AND (s.finished_at, s.key) < (pivot.at, $2::text)
), ${endedLocked('held', `SELECT id FROM ${t.runs} WHERE id IN (SELECT child FROM kids)`, 'ORDER BY id ')}, gone AS (
  -- A child spawned before the step whose run retention has deleted: the fork's handle would wait on it forever,
  -- unless its result is recorded before the step too (the fork replays it and never reads the child).
  SELECT k.key, k.child FROM kids k, src, pivot
  WHERE NOT EXISTS (SELECT 1 FROM held WHERE held.id = k.child)
    AND NOT EXISTS (
      SELECT 1 FROM ${t.steps} r
      WHERE r.run_id = $1 AND r.run_day = src.run_day AND r.kind = 'child-result' AND r.key = 'child-result:' || substr(k.key, length('child:') + 1)
        AND (r.finished_at, r.key) < (pivot.at, $2::text))
  LIMIT 1
), ins AS (
  INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, keys, queue, partition_key, priority, forked_from, app_version, deadline, timeout_ms, key_format,
                         trace_context)
  SELECT $3, src.workflow, 'pending', COALESCE($4, src.input), now(), src.keys, src.queue, src.partition_key, src.priority, src.id, $7,
         CASE WHEN src.queue IS NULL THEN now() + $8::bigint * interval '1 millisecond' END, CASE WHEN src.queue IS NOT NULL THEN $8::bigint END, src.key_format,
         $11
  FROM src, pivot
  WHERE NOT EXISTS (SELECT 1 FROM gone)
  ON CONFLICT DO NOTHING
  RETURNING id, run_day, queue, workflow
), steps AS (
  INSERT INTO ${t.steps} (run_id, run_day, key, kind, outcome, result, error, started_at, finished_at)
  SELECT ins.id, ins.run_day, s.key, s.kind, s.outcome, s.result, s.error, s.started_at, s.finished_at
  FROM ins, src, pivot, ${t.steps} s
  WHERE s.run_id = $1 AND s.run_day = src.run_day AND (s.finished_at, s.key) < (pivot.at, $2::text) AND s.key <> '${DEADLINE_PASSED_KEY}'
  RETURNING key
), signals AS (
  INSERT INTO ${t.signals} (run_id, run_day, name, payload, source, delivered_at)
  SELECT ins.id, ins.run_day, g.name, g.payload, g.source, g.delivered_at FROM ins, src, pivot, ${t.signals} g
  WHERE g.run_id = $1 AND g.run_day = src.run_day AND ($5 = 'all' OR g.delivered_at < pivot.at)
  RETURNING name
), messages AS (
  INSERT INTO ${t.messages} (run_id, run_day, channel, key, seq, payload, sent_at, acked_at, source)
  SELECT ins.id, ins.run_day, m.channel, m.key, m.seq, m.payload, m.sent_at, CASE WHEN m.acked_at < pivot.at THEN m.acked_at END, m.source
  FROM ins, src, pivot, ${t.messages} m
  WHERE m.run_id = $1 AND m.run_day = src.run_day AND ($5 = 'all' OR m.sent_at < pivot.at)
  RETURNING key
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT ins.id, ins.run_day, 'forked-from', $6,
         jsonb_build_object('source', $1::text, 'fromStep', $2::text, 'signals', $5::text, 'copiedSteps', (SELECT count(*) FROM steps),
                            'copiedSignals', (SELECT count(*) FROM signals), 'copiedMessages', (SELECT count(*) FROM messages),
                            'inputOverridden', $4::text IS NOT NULL)
  FROM ins
  UNION ALL
  SELECT $1, src.run_day, 'forked', $6, jsonb_build_object('fork', $3::text, 'fromStep', $2::text) FROM ins, src
)
SELECT EXISTS (SELECT 1 FROM src) AS source, EXISTS (SELECT 1 FROM pivot) AS step, (SELECT workflow FROM ins) AS workflow,
       (SELECT key FROM gone) AS "goneSpawn", (SELECT child FROM gone) AS "goneChild", (SELECT count(*) FROM held) AS reused,
       (SELECT count(*) FROM ins, pg_notify(CASE WHEN ins.queue IS NULL THEN $9 ELSE $10 END, COALESCE(ins.queue, ins.id))) AS notified`;

/**
 * The CTE `name`: the rows of `select` (a SELECT of the runs table with a WHERE), those that have ended
 * locked FOR KEY SHARE until the fork commits (every row: the fork's final SELECT reads them all).
 * Retention deletes no other run; it passes over a row locked so, and rechecks for forks once it has
 * locked its own (RetentionRepository); a row it is deleting is waited for, and then missing. A run
 * still going is read as it is and not locked, so a fork waits on none of the FOR UPDATE locks its
 * deliveries or its end take.
 */
const endedLocked = (name: string, select: string, order = '') => `${name}_ended AS (
  ${select} AND finished_at IS NOT NULL ${order}FOR KEY SHARE
), ${name}_going AS (
  ${select} AND finished_at IS NULL
), ${name} AS (
  SELECT * FROM ${name}_ended UNION ALL SELECT * FROM ${name}_going
)`;
