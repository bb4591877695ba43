import type { PoolClient } from 'pg';
import type { Tables } from './tables';

/** The tables partitioned by `run_day`, the UTC day their run was created (migration 13). */
export const JOURNAL_TABLES = ['steps', 'signals', 'messages', 'history'] as const;

/** The day of every run created before the journal was partitioned; its rows are the partitions `<table>_legacy`. */
export const LEGACY_DAY = '1970-01-01';

/** The day of history rows that are no run's (a schedule's audit trail, under `schedule:<name>`): the partition `history_standing`, never dropped. */
export const NO_RUN_DAY = '-infinity';

/**
 * The journal partition of the run whose id is `id` (an SQL expression), for a lookup to read that
 * partition's rows alone. Postgres prunes the others only as the statement runs, after setting up a
 * scan of each, so every day kept costs such a lookup a few microseconds; the journal load, the one
 * every claim makes, goes through journal_of instead, which prunes first.
 */
export const runDaySql = (t: Tables, id: string) => `(SELECT run_day FROM ${t.runs} WHERE id = ${id})`;

/**
 * How many days ahead of the database's today the partitions exist: two days without any instance
 * running (a boot makes them first). Few, because a statement that prunes as it runs pays for every one.
 */
export const PARTITION_DAYS_AHEAD = 2;

/**
 * Makes the partitions missing for the days from `from` to `to` days after today (UTC, the database's
 * clock; a test seeds past days with a negative `from`, down to a month back): make_journal_partitions,
 * a function of the schema that runs with its owner's rights, so an application whose database user
 * may not create tables (migrations applied by a pipeline) still has its days made.
 */
export const createJournalPartitionsSql = (t: Tables, from = 0, to = PARTITION_DAYS_AHEAD) =>
  `SELECT ${t.makeJournalPartitions}(${Math.trunc(from)}, ${Math.trunc(to)})`;

/** A partition of a journal table, with the run day it holds. */
export interface JournalPartition {
  parent: string;
  name: string;
  day: string | null;
  /** A DETACH … CONCURRENTLY interrupted half-way: it is finished (FINALIZE) before the drop. */
  detachPending: boolean;
  /** On disk, with its indexes. */
  bytes: number;
}

/** Runs a statement, answering its rows: DurableDatabase.query, or a pg client's. */
export type RowsOf = <T>(sql: string, params: unknown[]) => Promise<T[]>;

/** The journal's partitions, read from the catalog. */
export async function journalPartitions(query: RowsOf, t: Tables): Promise<JournalPartition[]> {
  const rows = await query<{ parent: string; name: string; pending: boolean; bytes: string }>(
    `SELECT p.relname AS parent, c.relname AS name, i.inhdetachpending AS pending, pg_total_relation_size(c.oid) AS bytes
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relnamespace = $1::regnamespace AND p.relname = ANY($2) ORDER BY c.relname`,
    [t.schema, JOURNAL_TABLES],
  );
  return rows.map(({ parent, name, pending, bytes }) => ({ parent, name, day: dayOf(name), detachPending: pending, bytes: Number(bytes) }));
}

/** The run day a partition holds; null for `history_standing`, which holds none. */
function dayOf(partition: string): string | null {
  const day = /_d(\d{4})(\d{2})(\d{2})$/.exec(partition);
  if (day) return `${day[1]}-${day[2]}-${day[3]}`;
  return partition.endsWith('_legacy') ? LEGACY_DAY : null;
}

/**
 * Drops the journal partitions of every day no run is left of (retention deleted them all), older than
 * yesterday (a run inserted just before midnight may still be committing). Each is detached
 * CONCURRENTLY, which waits for the transactions that might read it but locks no reader or writer of
 * the journal, then dropped. `client` must be outside a transaction (CONCURRENTLY needs its own). A
 * session advisory lock lets one caller at a time do it. Returns the days dropped, or null when
 * another caller holds the lock. Dropping needs the tables' owner: another user gets an error saying so.
 */
export async function dropEmptiedJournalDays(client: PoolClient, t: Tables): Promise<string[] | null> {
  const lock = `nestjs-durable:partition-drop:${t.schema}`;
  const [{ locked }] = (await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS locked`, [lock])).rows;
  if (!locked) return null;
  try {
    return await dropDays(client, t);
  } catch (error) {
    if ((error as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw error;
    const [{ user }] = (await client.query<{ user: string }>(`SELECT current_user AS user`)).rows;
    throw new Error(
      `The journal's emptied days cannot be dropped by the database user "${user}", which does not own its tables. ` +
        `Drop them as their owner (the role that migrates): dropEmptiedJournal({ connection, schema: '${t.schema}' }) from nestjs-durable, daily.`,
    );
  } finally {
    await client.query(`SELECT pg_advisory_unlock(hashtext($1))`, [lock]);
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';

async function dropDays(client: PoolClient, t: Tables): Promise<string[]> {
  const partitions = await journalPartitions(async (sql, params) => (await client.query(sql, params)).rows, t);
  // A partition detached whose drop never came (the process ended between the two) is no table's partition any more.
  const detached = await detachedPartitions(client, t);
  const { rows } = await client.query<{ day: string }>(
    `SELECT d::text AS day FROM unnest($1::date[]) d
     WHERE d < timezone('UTC', now())::date - 1 AND NOT EXISTS (SELECT 1 FROM ${t.runs} WHERE run_day = d)`,
    [[...new Set([...partitions.map((p) => p.day), ...detached.map(dayOf)].filter((day) => day !== null))]],
  );
  const days = new Set(rows.map((r) => r.day));
  const table = (name: string) => `"${t.schema}"."${name}"`;
  // A detach cut off half-way is finished first, whatever its day: Postgres takes no other detach of its table until
  // then. Like every table here, it is dropped only once its day may go (else a later cleanup drops it, detached).
  for (const partition of partitions.filter((p) => p.detachPending)) {
    await client.query(`ALTER TABLE ${table(partition.parent)} DETACH PARTITION ${table(partition.name)} FINALIZE`);
    if (partition.day && days.has(partition.day)) await client.query(`DROP TABLE ${table(partition.name)}`);
  }
  for (const partition of partitions.filter((p) => !p.detachPending && p.day && days.has(p.day))) {
    await client.query(`ALTER TABLE ${table(partition.parent)} DETACH PARTITION ${table(partition.name)} CONCURRENTLY`);
    await client.query(`DROP TABLE ${table(partition.name)}`);
  }
  for (const name of detached) {
    const day = dayOf(name);
    if (day && days.has(day)) await client.query(`DROP TABLE ${table(name)}`);
  }
  return [...days].sort();
}

/** The tables named as journal partitions that are no table's partition: detached by a drop that did not finish. */
async function detachedPartitions(client: PoolClient, t: Tables): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT relname AS name FROM pg_class
     WHERE relnamespace = $1::regnamespace AND relkind = 'r' AND NOT relispartition AND relname ~ $2`,
    [t.schema, `^(${JOURNAL_TABLES.join('|')})_(d[0-9]{8}|legacy)$`],
  );
  return rows.map((r) => r.name);
}
