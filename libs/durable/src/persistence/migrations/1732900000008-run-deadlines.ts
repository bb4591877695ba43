import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * Run deadlines. `deadline` is the absolute instant a run must end by (its own, or the earlier of its
 * own and its parent's); `timeout_ms` is a timeout that counts from the run's first execution (a
 * queued or delayed run), turned into `deadline` by the claim that begins it; `detached` marks a
 * child that keeps neither its parent's deadline nor its parent's cancel.
 */
export class RunDeadlines1732900000008 implements MigrationInterface {
  name = 'RunDeadlines1732900000008';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      ALTER TABLE ${t.runs}
        ADD COLUMN deadline timestamptz,
        ADD COLUMN timeout_ms bigint,
        ADD COLUMN detached boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`ALTER TABLE ${t.runs} DROP COLUMN deadline, DROP COLUMN timeout_ms, DROP COLUMN detached`);
  }
}
