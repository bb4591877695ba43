import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * The runs that began and wait pending (for a slot of their queue, or for a worker) with a deadline, by that
 * deadline: the sweeper fails those whose grace ended meanwhile (expirePendingPastGraceSql) with one range
 * read. Few rows: a begun run is pending only between a wake and its admission. Built in one statement under
 * the migrations' lock, as migration 23's index.
 */
export class BegunPendingDeadline1732900000025 implements MigrationInterface {
  name = 'BegunPendingDeadline1732900000025';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(
      `CREATE INDEX runs_begun_pending_deadline_idx ON ${t.runs} (deadline) WHERE status = 'pending' AND began_at IS NOT NULL AND deadline IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "${tablesFor(schemaOf(queryRunner)).schema}".runs_begun_pending_deadline_idx`);
  }
}
