import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * The held slots by holder: a statement that moves runs off `running` gives each one's slot back by
 * its holder (queueSlotFreedSql), and the mending pass looks for running runs that hold none. Without
 * this index each of those read every slot of the queue: an end in a queue of concurrency 1,000
 * scanned its 1,000 slot rows. A slot's update changed an indexed column already (the free slots'
 * index is partial on `holder`), so it was never HOT: the index adds one entry per slot taken. Built
 * in one statement, not CONCURRENTLY (a migration runs in a transaction): the table holds one row per
 * unit of the queues' concurrency, so its lock holds queued starts and ends for milliseconds.
 */
export class QueueSlotHolders1732900000017 implements MigrationInterface {
  name = 'QueueSlotHolders1732900000017';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`CREATE INDEX queue_slots_holder_idx ON ${t.queueSlots} (holder) WHERE holder IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP INDEX "${t.schema}".queue_slots_holder_idx`);
  }
}
