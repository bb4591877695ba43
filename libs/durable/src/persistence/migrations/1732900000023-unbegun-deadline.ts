import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * The queued runs that have not begun and have a deadline, by that deadline: the sweeper fails those
 * whose deadline passed (expireUnbegunSql) with one range read, whatever the queues' backlog. Few rows
 * (a queued run has a deadline before it begins only with `timeoutIncludesQueue`, `deadline`, a
 * parent's, or an operator's). Built in one statement under the migrations' lock: writes to runs wait
 * while it reads the whole table.
 */
export class UnbegunDeadline1732900000023 implements MigrationInterface {
  name = 'UnbegunDeadline1732900000023';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(
      `CREATE INDEX runs_unbegun_deadline_idx ON ${t.runs} (deadline) WHERE status = 'pending' AND queue IS NOT NULL AND began_at IS NULL AND deadline IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "${tablesFor(schemaOf(queryRunner)).schema}".runs_unbegun_deadline_idx`);
  }
}
