import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * The runs that have not begun (pending in a queue or for a worker, waiting for a delayed start) and
 * have a deadline, by that deadline: the sweeper fails those whose deadline passed (expireUnbegunSql)
 * with one range read, whatever the queues' backlog. Few rows (a run has a deadline before it begins
 * only with `timeoutIncludesQueue`, `deadline`, a parent's, an operator's, or a `timeout` of an unqueued,
 * undelayed run, which begins at once unless no worker has a free slot). Built in one statement
 * under the migrations' lock: writes to runs wait while it reads the whole table.
 */
export class UnbegunDeadline1732900000023 implements MigrationInterface {
  name = 'UnbegunDeadline1732900000023';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(
      `CREATE INDEX runs_unbegun_deadline_idx ON ${t.runs} (deadline) WHERE status IN ('pending', 'waiting') AND began_at IS NULL AND deadline IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "${tablesFor(schemaOf(queryRunner)).schema}".runs_unbegun_deadline_idx`);
  }
}
