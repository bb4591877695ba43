import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * `began_at` for the runs that began before migration 6 added it and have not ended: running, or
 * waiting for anything but their delayed start (before migration 4 a run waited only once it had
 * executed; since, a delayed start is the one wait a run has before it begins; `queue`, a reason read
 * and never stored, is left out all the same). Left NULL, such a run read as never begun: given a
 * deadline that passed, the sweeper failed it without its grace (expireUnbegunSql) and a resume left
 * it (resumeSql), where a begun run meets its deadline at the wait. Its creation stands in for its
 * first execution, which no column kept. A pending run from then (not yet claimed, retried, or
 * released at a shutdown) is left: the claim that begins it again sets the instant. One statement
 * under the migrations' lock; every run that began since migration 6 has it already, so it changes
 * no row of a database made since.
 */
export class BeganBeforeQueues1732900000024 implements MigrationInterface {
  name = 'BeganBeforeQueues1732900000024';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(
      `UPDATE ${t.runs} SET began_at = created_at
       WHERE began_at IS NULL AND (status = 'running' OR (status = 'waiting' AND COALESCE(wait_kind NOT IN ('start', 'queue'), true)))`,
    );
  }

  /** The instants stay: migration 6's down drops the column. */
  async down(): Promise<void> {}
}
