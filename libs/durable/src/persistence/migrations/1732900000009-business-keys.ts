import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * Business keys: `runs.keys`, a jsonb object of up to 16 names to string values, with a GIN index
 * (jsonb_path_ops) over the runs that have keys. A lookup by one key or by several is one containment
 * probe (`keys @> '{"orderId":"A-17"}'`) of that index, and the keys live in the run's own row: they
 * commit with the run, and retention deletes them with it.
 */
export class BusinessKeys1732900000009 implements MigrationInterface {
  name = 'BusinessKeys1732900000009';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`ALTER TABLE ${t.runs} ADD COLUMN keys jsonb`);
    await queryRunner.query(`CREATE INDEX runs_keys_idx ON ${t.runs} USING gin (keys jsonb_path_ops) WHERE keys IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_keys_idx`);
    await queryRunner.query(`ALTER TABLE ${t.runs} DROP COLUMN keys`);
  }
}
