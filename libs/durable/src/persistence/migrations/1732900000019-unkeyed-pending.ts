import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * The queue's partition index holds the pending runs with no partition key too (under a null key),
 * so admission finds them by their own range of the index: under a partition limit whose head is
 * crowded it read them in the queue's order through every keyed run before them (a few such runs
 * behind a million keyed ones read the backlog on each pass). One index entry more for each pending
 * queued run without a key. Built in one statement, not CONCURRENTLY (a migration runs in a
 * transaction): writes to the runs table wait while it builds, for as long as reading the pending
 * queued runs takes.
 */
export class UnkeyedPending1732900000019 implements MigrationInterface {
  name = 'UnkeyedPending1732900000019';

  async up(queryRunner: QueryRunner): Promise<void> {
    await this.build(queryRunner, `status = 'pending' AND queue IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await this.build(queryRunner, `status = 'pending' AND queue IS NOT NULL AND partition_key IS NOT NULL`);
  }

  private async build(queryRunner: QueryRunner, where: string): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_queue_partition_idx`);
    await queryRunner.query(`CREATE INDEX runs_queue_partition_idx ON ${t.runs} (queue, partition_key, priority, wake_at) WHERE ${where}`);
  }
}
