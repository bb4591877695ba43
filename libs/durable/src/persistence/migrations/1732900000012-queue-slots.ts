import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, Tables, tablesFor } from '../tables';

/**
 * A queue's slots as rows: one per unit of its concurrency, `holder` the run executing in it. A start
 * takes a free one with SKIP LOCKED and begins its run at once, so starts neither wait for an admission
 * pass nor serialize on the queue's lock; admission passes take them the same way. The statements that
 * move a run off `running` give its slot back. Two functions read with a snapshot of their own (a
 * PL/pgSQL function is never inlined, and a volatile one takes a new snapshot for each statement in
 * it): `take_queue_slot` locks a free slot as of now, not as of the calling statement's start, and
 * `queue_slot_held` answers whether a holder still executes, so a repair that frees a stale holder's
 * slot cannot be misled by its own statement's older snapshot.
 */
export class QueueSlots1732900000012 implements MigrationInterface {
  name = 'QueueSlots1732900000012';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      CREATE TABLE ${t.queueSlots} (
        queue text NOT NULL,
        slot integer NOT NULL CONSTRAINT queue_slots_slot_check CHECK (slot >= 1),
        holder text,
        PRIMARY KEY (queue, slot)
      )`);
    // The free slots: a start finds one in a probe however many of a large queue's slots are taken.
    await queryRunner.query(`CREATE INDEX queue_slots_free_idx ON ${t.queueSlots} (queue, slot) WHERE holder IS NULL`);
    await queryRunner.query(`
      CREATE FUNCTION ${t.queueSlotHeld}(holder text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        RETURN EXISTS (SELECT 1 FROM ${t.runs} WHERE id = holder AND status = 'running');
      END
      $$`);
    await queryRunner.query(takeQueueSlotSql(t));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP FUNCTION ${t.queueSlotTake}(text, integer)`);
    await queryRunner.query(`DROP FUNCTION ${t.queueSlotHeld}(text)`);
    await queryRunner.query(`DROP TABLE ${t.queueSlots}`);
  }
}

/** `take_queue_slot` as this migration makes it (QueueSlotBatches1732900000014's down puts it back). */
export const takeQueueSlotSql = (t: Tables, create = 'CREATE') => `
      ${create} FUNCTION ${t.queueSlotTake}(q text, slots integer) RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        taken integer;
      BEGIN
        -- Each try sees the slots given back until it began. A burst of starts can take every slot one
        -- try saw free while others were given back after it began: those are for the next try.
        FOR try IN 1..3 LOOP
          SELECT slot INTO taken FROM ${t.queueSlots} WHERE queue = q AND slot <= slots AND holder IS NULL
          ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED;
          EXIT WHEN taken IS NOT NULL
            OR NOT EXISTS (SELECT 1 FROM ${t.queueSlots} WHERE queue = q AND slot <= slots AND holder IS NULL);
        END LOOP;
        RETURN taken;
      END
      $$`;
