import { DurableDatabase } from './durable-database';

/** What the cleanup deletes: the age in ms after which a run that ended so goes (undefined keeps it), and the batch size. */
export interface RetentionAges {
  completed?: number;
  failed?: number;
  cancelled?: number;
  batchSize: number;
}

/**
 * Deletes finished runs older than their kind's age, with their journal, a batch per transaction;
 * a child stays while its parent may still read it.
 * A transaction-scoped advisory lock lets one instance at a time clean a schema; the others skip.
 */
export class RetentionRepository {
  constructor(private readonly db: DurableDatabase) {}

  /** Deletes one batch; returns how many runs it deleted, or null when another instance holds the lock. */
  async deleteBatch(retention: RetentionAges): Promise<number | null> {
    const t = this.db.tables;
    return this.db.transaction(async (client) => {
      const [{ locked }] = (
        await client.query(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [`nestjs-durable:retention:${t.schema}`])
      ).rows;
      if (!locked) return null;
      const { rows } = await client.query(
        `WITH doomed AS (
           SELECT id FROM ${t.runs} r
           WHERE finished_at IS NOT NULL
             AND ((status = 'completed' AND finished_at < now() - $1::bigint * interval '1 millisecond')
               OR (status = 'failed' AND finished_at < now() - $2::bigint * interval '1 millisecond')
               OR (status = 'cancelled' AND finished_at < now() - $3::bigint * interval '1 millisecond'))
             -- A child goes only once its parent cannot read it again: the parent is gone, completed or
             -- cancelled (a failed one may be retried). A subquery, so it is one primary-key lookup per row.
             AND (r.parent_id IS NULL OR COALESCE((SELECT p.status IN ('completed', 'cancelled') FROM ${t.runs} p WHERE p.id = r.parent_id), true))
           ORDER BY finished_at
           LIMIT $4
           FOR UPDATE SKIP LOCKED
         ), steps AS (
           DELETE FROM ${t.steps} WHERE run_id IN (SELECT id FROM doomed)
         ), signals AS (
           DELETE FROM ${t.signals} WHERE run_id IN (SELECT id FROM doomed)
         ), messages AS (
           DELETE FROM ${t.messages} WHERE run_id IN (SELECT id FROM doomed)
         ), history AS (
           DELETE FROM ${t.history} WHERE run_id IN (SELECT id FROM doomed)
         ), runs AS (
           DELETE FROM ${t.runs} WHERE id IN (SELECT id FROM doomed) RETURNING id
         )
         SELECT count(*)::int AS deleted FROM runs`,
        [retention.completed ?? null, retention.failed ?? null, retention.cancelled ?? null, retention.batchSize],
      );
      // Instances that stopped beating a day ago are gone for good.
      await client.query(`DELETE FROM ${t.instances} WHERE heartbeat_at < now() - interval '1 day'`);
      return rows[0].deleted as number;
    });
  }
}
