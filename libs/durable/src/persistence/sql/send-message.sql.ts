import type { Tables } from '../tables';
import { claimedByDeliverySql, claimHistorySql, wakeOnDeliverySql } from './wake.sql';

/** Locks the run row: sends to one run serialize here, so seq follows commit order. $1 run. */
export const lockRunSql = (t: Tables) => `SELECT workflow, status FROM ${t.runs} WHERE id = $1 FOR UPDATE`;

/**
 * Appends a channel message, deduplicated by (run, channel, key). Runs after lockRunSql in the same
 * transaction, so its snapshot sees every committed message: seq is the channel's next number, gap-free.
 * Then deliver-then-wake as for signals. $1 run, $2 channel, $3 key, $4 payload, $5 actor, $6 wake
 * channel, $7 claiming owner (null: none), $8 lease ms, $9 the delivery call's id (claimHistorySql).
 */
export const sendMessageSql = (t: Tables) => `
WITH run AS (
  SELECT id, run_day, status, wait, wait_kind, wait_name, queue, xmin::text AS version FROM ${t.runs} WHERE id = $1
), ins AS (
  INSERT INTO ${t.messages} (run_id, run_day, channel, key, seq, payload, source)
  SELECT $1, run.run_day, $2, $3,
         COALESCE((SELECT max(seq) FROM ${t.messages} WHERE run_id = $1 AND run_day = run.run_day AND channel = $2), 0) + 1, $4, $5
  FROM run
  ON CONFLICT (run_id, channel, key, run_day) DO NOTHING
  RETURNING run_day, seq, sent_at
), ${wakeOnDeliverySql(t, 'channel', '$7', '$8')}, history AS (
  INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
  SELECT $1, run_day, 'message-sent', $5, jsonb_build_object('channel', $2::text, 'key', $3::text, 'seq', seq) FROM ins ${claimHistorySql('channel', '$7', '$9')}
)
SELECT (SELECT seq FROM ins) AS seq,
       (SELECT sent_at FROM ins) AS sent_at,
       COALESCE((SELECT seq FROM ins), (SELECT m.seq FROM ${t.messages} m, run WHERE m.run_id = $1 AND m.run_day = run.run_day AND m.channel = $2 AND m.key = $3)) AS existing_seq,
       (SELECT count(*) FROM bump, pg_notify($6, bump.id) WHERE bump.wake) AS woken,
       c.*
FROM (VALUES (1)) one
${claimedByDeliverySql(t)}`;

/** Marks a message consumed, fenced by the lease token. $1 run, $2 token, $3 channel, $4 key. */
export const ackMessageSql = (t: Tables) => `
WITH lease AS (SELECT run_day FROM ${t.runs} WHERE id = $1 AND lease_token = $2 FOR SHARE),
acked AS (
  UPDATE ${t.messages} m SET acked_at = now()
  FROM lease WHERE m.run_id = $1 AND m.run_day = lease.run_day AND m.channel = $3 AND m.key = $4 AND m.acked_at IS NULL
  RETURNING 1
)
SELECT (SELECT count(*) FROM lease) > 0 AS leased, (SELECT count(*) FROM acked) AS acked`;
