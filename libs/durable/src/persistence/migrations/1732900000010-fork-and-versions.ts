import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * Fork and versions. `forked_from` is the run a fork copied its journal from; `app_version` the
 * application's version when the run was created; `warning` what an execution found wrong with the
 * journal (checkpoints the code never reached before it parked again).
 */
export class ForkAndVersions1732900000010 implements MigrationInterface {
  name = 'ForkAndVersions1732900000010';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      ALTER TABLE ${t.runs}
        ADD COLUMN forked_from text,
        ADD COLUMN app_version text,
        ADD COLUMN warning jsonb`);
    await queryRunner.query(`CREATE INDEX runs_forked_from_idx ON ${t.runs} (forked_from) WHERE forked_from IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_forked_from_idx`);
    await queryRunner.query(`ALTER TABLE ${t.runs} DROP COLUMN forked_from, DROP COLUMN app_version, DROP COLUMN warning`);
  }
}
