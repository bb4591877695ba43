import type { Tables } from '../tables';
import { claimedByDeliverySql, claimHistorySql, wakeOnDeliverySql } from './wake.sql';

/**
 * Delivers a signal in one statement: journaled at most once per (run, name) by the primary key
 * (first payload wins; a redelivery inserts nothing), then deliver-then-wake: the run's wake_seq is
 * bumped, a run parked on this very signal is made due now (or claimed by $7), and a NOTIFY (sent on
 * commit) tells every instance. A completed or cancelled run takes nothing, nor a run of another
 * workflow than $6 names.
 * $1 run, $2 name, $3 payload, $4 actor, $5 wake channel, $6 workflows (null: any), $7 claiming owner
 * (null: none), $8 lease ms, $9 the delivery call's id (claimHistorySql).
 */
export const deliverSignalSql = (t: Tables) => `
WITH run AS (
  SELECT id, run_day, status, wait, wait_kind, wait_name, queue, xmin::text AS version FROM ${t.runs}
  WHERE id = $1 AND status NOT IN ('completed', 'cancelled') AND ($6::text[] IS NULL OR workflow = ANY($6::text[]))
  FOR UPDATE
), ins AS (
  INSERT INTO ${t.signals} (run_id, run_day, name, payload, source) SELECT id, run_day, $2, $3, $4 FROM run
  ON CONFLICT (run_id, name, run_day) DO NOTHING
  RETURNING run_day, delivered_at
), ${wakeOnDeliverySql(t, 'signal', '$7', '$8')}, history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT $1, run_day, 'signal-delivered', $4, jsonb_build_object('name', $2::text) FROM ins ${claimHistorySql('signal', '$7', '$9')}
)
SELECT (SELECT count(*) FROM run) > 0 AS open,
       (SELECT delivered_at FROM ins) AS delivered_at,
       (SELECT count(*) FROM bump, pg_notify($5, bump.id) WHERE bump.wake) AS woken,
       c.*
FROM (VALUES (1)) one
${claimedByDeliverySql(t)}`;
