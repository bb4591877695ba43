import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/** The ended statuses, each with an index of its runs by when they ended. */
const ENDED = ['completed', 'failed', 'cancelled'];

/**
 * Retention reads each status from its own age on (pickBatchSql), through an index of that status's
 * runs by finished_at. Through one index of every finished run by finished_at, each batch read again,
 * from the oldest, every run its age kept (a failed run under a longer age, or under none). Three
 * partial indexes hold one entry per finished run, as the one before did (one index on status and
 * finished_at held the same entries at twice its size). They are built before the old one goes,
 * under the migrations' lock: writes to runs wait while they build.
 */
export class RetentionByStatus1732900000022 implements MigrationInterface {
  name = 'RetentionByStatus1732900000022';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    for (const status of ENDED)
      await queryRunner.query(`CREATE INDEX runs_${status}_idx ON ${t.runs} (finished_at) WHERE status = '${status}'`);
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_finished_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`CREATE INDEX runs_finished_idx ON ${t.runs} (finished_at) WHERE finished_at IS NOT NULL`);
    for (const status of ENDED) await queryRunner.query(`DROP INDEX "${t.schema}".runs_${status}_idx`);
  }
}
