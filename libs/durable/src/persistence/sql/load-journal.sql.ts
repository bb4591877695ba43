import type { Tables } from '../tables';

/**
 * The journal of the run `run` (the alias of a row of it with its `id` and `key_format`), as select-list
 * columns: the database clock (clock_timestamp(), as the statement runs: a claim made inside an application's
 * transaction would give that transaction's start with now()), the run's wake_seq as the statement's snapshot has it, its key_format
 * (set at its insert, never changed: any version of the row has it), and `journal`, the expression that reads it (journalOfSql or
 * BATCH_JOURNAL): checkpoints, signals, un-acked messages in order, and of the children only the one
 * the run parked on, once it has ended and before its result is journaled (a fan-in's wakes would
 * otherwise read every sibling and its output each time, n² for n children; the others a parent awaits
 * are read on demand, readChildren). All are read in the statement's one snapshot, so wake_seq matches
 * what was read (the park condition).
 */
export const journalColumnsSql = (t: Tables, run: string, journal: string) => `
  clock_timestamp() AS db_now,
  (SELECT wake_seq FROM ${t.runs} WHERE id = ${run}.id) AS wake_seq,
  ${run}.key_format,
  ${journal} AS journal`;

/** The journal of one run, `id` and its journal partition `day` SQL expressions (journal_of). */
export const journalOfSql = (t: Tables, id: string, day: string) => `${t.journalOf}(${id}, ${day})`;

/** The journal expression of a statement that joins journalsOfJoinSql. */
export const BATCH_JOURNAL = 'journals.journal';

/**
 * The journals of the runs of the CTE `source` (its `id` and `run_day`), read by one call of
 * journals_of and joined as `journals` to the row whose run id is `id`: for statements that take a
 * batch of runs (a claim, an admission), one read per day of runs instead of one per run. Their
 * journal expression is BATCH_JOURNAL.
 */
export const journalsOfJoinSql = (t: Tables, source: string, id: string) =>
  `LEFT JOIN (SELECT j.run, j.journal FROM (SELECT array_agg(id) AS ids, array_agg(run_day) AS days FROM ${source}) batch
    CROSS JOIN ${t.journalsOf}(batch.ids, batch.days) j) journals ON journals.run = ${id}`;

/** The statuses of a run that has ended. */
export const FINISHED = `('completed', 'failed', 'cancelled')`;

/** Everything an execution reads, in one round trip whatever its size, with the run's lease token and deadline. $1 run. */
export const loadJournalSql = (t: Tables) => `
SELECT r.lease_token, r.deadline, ${journalColumnsSql(t, 'r', journalOfSql(t, '$1', 'r.run_day'))} FROM (SELECT 1) one LEFT JOIN ${t.runs} r ON r.id = $1`;

/**
 * A run's deadline as the claim that begins it sets it (`r` the row being claimed): a timeout that
 * counts from the first execution (a queued or delayed run's) becomes an instant now. Claims return
 * the new value themselves: the journal columns read the statement's snapshot, from before the claim.
 */
export const beginDeadlineSql = (r: string) =>
  `CASE WHEN ${r}.began_at IS NULL AND ${r}.timeout_ms IS NOT NULL THEN LEAST(${r}.deadline, now() + ${r}.timeout_ms * interval '1 millisecond') ELSE ${r}.deadline END`;
