import type { Tables } from '../tables';

/**
 * Everything an execution reads, in one round trip whatever its size: checkpoints, signals, un-acked
 * messages in order, children, the run's wake_seq (read in the same snapshot, for the park
 * condition) and the database clock. $1 run.
 */
export const loadJournalSql = (t: Tables) => `
SELECT now() AS db_now,
  (SELECT wake_seq FROM ${t.runs} WHERE id = $1) AS wake_seq,
  (SELECT lease_token FROM ${t.runs} WHERE id = $1) AS lease_token,
  (SELECT COALESCE(json_agg(json_build_object('key', key, 'kind', kind, 'outcome', outcome, 'result', result, 'error', error)), '[]')
     FROM ${t.steps} WHERE run_id = $1) AS steps,
  (SELECT COALESCE(json_agg(json_build_object('name', name, 'payload', payload)), '[]')
     FROM ${t.signals} WHERE run_id = $1) AS signals,
  (SELECT COALESCE(json_agg(json_build_object('channel', channel, 'key', key, 'seq', seq, 'payload', payload, 'sentAt', sent_at) ORDER BY seq), '[]')
     FROM ${t.messages} WHERE run_id = $1 AND acked_at IS NULL) AS messages,
  (SELECT COALESCE(json_agg(json_build_object('id', id, 'status', status, 'output', output, 'error', error)), '[]')
     FROM ${t.runs} WHERE parent_id = $1) AS children`;
