import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';
import { takeQueueSlotSql } from './1732900000012-queue-slots';

/**
 * `take_queue_slots(q, slots, n)` locks up to n free slots of a queue at once, so a batch of queued
 * starts (group commit, startQueuedRunsSql) takes its slots in one call, with the snapshots of its own
 * that `take_queue_slot` takes for one. `take_queue_slot` becomes that function with n = 1: one
 * implementation, and its signature stays for the lone start and for instances of the version before.
 * Both PL/pgSQL, whose statements' plans are cached (a SQL wrapper would be planned on every call).
 */
export class QueueSlotBatches1732900000014 implements MigrationInterface {
  name = 'QueueSlotBatches1732900000014';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      CREATE FUNCTION ${t.queueSlotsTake}(q text, slots integer, n integer) RETURNS SETOF integer LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        taken integer[] := '{}';
      BEGIN
        -- Each try sees the slots given back until it began. A burst of starts can take every slot one
        -- try saw free while others were given back after it began: those are for the next try. Slots
        -- this call already holds look free to it (its own lock does not skip them): they are left out.
        FOR try IN 1..3 LOOP
          taken := taken || ARRAY(
            SELECT slot FROM ${t.queueSlots} WHERE queue = q AND slot <= slots AND holder IS NULL AND slot <> ALL (taken)
            ORDER BY slot LIMIT n - cardinality(taken) FOR UPDATE SKIP LOCKED);
          EXIT WHEN cardinality(taken) >= n
            OR NOT EXISTS (SELECT 1 FROM ${t.queueSlots} WHERE queue = q AND slot <= slots AND holder IS NULL AND slot <> ALL (taken));
        END LOOP;
        RETURN QUERY SELECT unnest(taken);
      END
      $$`);
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ${t.queueSlotTake}(q text, slots integer) RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        RETURN (SELECT slot FROM ${t.queueSlotsTake}(q, slots, 1) AS slot);
      END
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(takeQueueSlotSql(t, 'CREATE OR REPLACE'));
    await queryRunner.query(`DROP FUNCTION ${t.queueSlotsTake}(text, integer, integer)`);
  }
}
