import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * How a run's checkpoint keys spell the names in them (see runtime/checkpoint-keys): the runs there are,
 * and those an instance of an earlier version inserts during a rolling deploy, take the default, format
 * 1 (raw names, as their journals hold them); this version's inserts name format 2 (`%`, `:` and `#` in
 * names percent-escaped), and a fork its source's. A column with a constant default rewrites no row.
 */
export class KeyFormat1732900000020 implements MigrationInterface {
  name = 'KeyFormat1732900000020';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`ALTER TABLE ${t.runs} ADD COLUMN key_format smallint NOT NULL DEFAULT 1`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`ALTER TABLE ${t.runs} DROP COLUMN key_format`);
  }
}
