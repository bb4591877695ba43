import type { Tables } from '../tables';
import { parkedOnSql } from './wake.sql';
import { wokenBySql } from './wait-kinds.sql';

/**
 * A signal delivered by business keys in one statement: to the open runs (not completed or
 * cancelled) of the workflows $6 that have every key of $1, oldest first, at most $7 of them; a
 * fan-out to one takes a failed run last (its fork or a newer run is the one that goes on). With
 * $8 set (fan-out to all), more than $8 matches writes nothing (`ok` false): the delivery is whole
 * or not at all. Each run takes the signal at most once (its first payload stays; a redelivery is not
 * accepted); an accepted one bumps the run's wake_seq and makes a run parked on it due now, NOTIFYed
 * on commit, as a delivery by id does. Runs are locked oldest first, so two fan-outs never deadlock.
 * $1 keys (jsonb), $2 name, $3 payload, $4 actor, $5 wake channel, $6 workflows, $7 runs to lock,
 * $8 the most runs a fan-out to all may match (null: fan-out to one).
 */
export const deliverByKeysSql = (t: Tables) => `
WITH found AS (
  SELECT id, run_day, seq, status, wait, wait_kind, wait_name FROM ${t.runs}
  WHERE keys @> $1::jsonb AND status IN ('pending', 'running', 'waiting', 'failed') AND workflow = ANY($6::text[])
  ORDER BY $8::int IS NULL AND status = 'failed', seq LIMIT $7
  FOR UPDATE
), verdict AS (
  SELECT $8::int IS NULL OR count(*) <= $8::int AS ok FROM found
), run AS (
  SELECT found.* FROM found, verdict WHERE verdict.ok
), ins AS (
  INSERT INTO ${t.signals} (run_id, run_day, name, payload, source) SELECT id, run_day, $2, $3, $4 FROM run
  ON CONFLICT (run_id, name, run_day) DO NOTHING
  RETURNING run_id, run_day, delivered_at
), bump AS (
  UPDATE ${t.runs} r
  SET wake_seq = r.wake_seq + 1, wake_at = CASE WHEN w.parked THEN now() ELSE r.wake_at END
  FROM (
    SELECT id, status = 'running' AS running, status = 'waiting' AND ${wokenBySql('wait_kind', 'signal')} AND ${parkedOnSql('signal')} AS parked
    FROM run WHERE id IN (SELECT run_id FROM ins)
  ) w
  WHERE r.id = w.id
  RETURNING r.id, w.running OR w.parked AS wake
), history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT run_id, run_day, 'signal-delivered', $4, jsonb_build_object('name', $2::text, 'byKeys', $1::jsonb) FROM ins
)
SELECT (SELECT ok FROM verdict) AS ok,
       (SELECT count(*) FROM found) AS matched,
       COALESCE((SELECT json_agg(json_build_object('runId', run.id, 'accepted', ins.run_id IS NOT NULL,
                                                   'deliveredAt', COALESCE(ins.delivered_at, s.delivered_at, now())) ORDER BY run.seq)
                 FROM run LEFT JOIN ins ON ins.run_id = run.id LEFT JOIN ${t.signals} s ON s.run_id = run.id AND s.run_day = run.run_day AND s.name = $2), '[]') AS deliveries,
       (SELECT array_agg(id) FROM bump, pg_notify($5, bump.id) WHERE bump.wake) AS woken`;
