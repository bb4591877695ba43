import type { Tables } from '../tables';
import { waitKindSql } from './wait-kinds.sql';

/**
 * The journal of the run whose id is `id` and journal partition `day` (SQL expressions), as select-list columns: checkpoints,
 * signals, un-acked messages in order, the run's wake_seq and the database clock. All are read in the
 * statement's one snapshot, so wake_seq matches what was read (the park condition). Of the children,
 * only the one the run parked on, once it has ended and before its result is journaled: a fan-in's
 * wakes would otherwise read every sibling and its output each time (n² for n children); the others
 * a parent awaits are read on demand (readChildren).
 */
export const journalColumnsSql = (t: Tables, id: string, day: string) => `
  now() AS db_now,
  (SELECT wake_seq FROM ${t.runs} WHERE id = ${id}) AS wake_seq,
  (SELECT COALESCE(json_agg(json_build_object('key', key, 'kind', kind, 'outcome', outcome, 'result', result, 'error', error)), '[]')
     FROM ${t.steps} WHERE run_id = ${id} AND run_day = ${day}) AS steps,
  (SELECT COALESCE(json_agg(json_build_object('name', name, 'payload', payload, 'deliveredAt', delivered_at)), '[]')
     FROM ${t.signals} WHERE run_id = ${id} AND run_day = ${day}) AS signals,
  (SELECT COALESCE(json_agg(json_build_object('channel', channel, 'key', key, 'seq', seq, 'payload', payload, 'sentAt', sent_at) ORDER BY seq), '[]')
     FROM ${t.messages} WHERE run_id = ${id} AND run_day = ${day} AND acked_at IS NULL) AS messages,
  (SELECT COALESCE(json_agg(json_build_object('id', child.id, 'status', child.status, 'output', child.output, 'error', child.error)), '[]')
     FROM ${t.runs} child
     -- The child by the id its parent's wait names: a primary-key probe. The aliases are unlike any
     -- a caller's id expression uses (a claim passes c.id), which would otherwise be captured here.
     WHERE child.id = (SELECT parked.wait->>'childRunId' FROM ${t.runs} parked WHERE parked.id = ${id} AND parked.wait_kind = ${waitKindSql('child')})
       AND child.status IN ${FINISHED}
       AND NOT EXISTS (SELECT 1 FROM ${t.steps} taken WHERE taken.run_id = ${id} AND taken.run_day = ${day} AND taken.key = 'child-result:' || child.parent_step)) AS children`;

/** The statuses of a run that has ended. */
export const FINISHED = `('completed', 'failed', 'cancelled')`;

/** Everything an execution reads, in one round trip whatever its size, with the run's lease token and deadline. $1 run. */
export const loadJournalSql = (t: Tables) => `
SELECT r.lease_token, r.deadline, ${journalColumnsSql(t, '$1', 'r.run_day')} FROM (SELECT 1) one LEFT JOIN ${t.runs} r ON r.id = $1`;

/**
 * A run's deadline as the claim that begins it sets it (`r` the row being claimed): a timeout that
 * counts from the first execution (a queued or delayed run's) becomes an instant now. Claims return
 * the new value themselves: the journal columns read the statement's snapshot, from before the claim.
 */
export const beginDeadlineSql = (r: string) =>
  `CASE WHEN ${r}.began_at IS NULL AND ${r}.timeout_ms IS NOT NULL THEN LEAST(${r}.deadline, now() + ${r}.timeout_ms * interval '1 millisecond') ELSE ${r}.deadline END`;
