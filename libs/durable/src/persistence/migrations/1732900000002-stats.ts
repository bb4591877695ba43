import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * What the dashboard's stats need to cost the same at a million runs as at ten: the oldest waiting
 * run is the first entry of an index on the instant each wait began, instead of a sort of every
 * waiting run. `wait->>'since'` is text, and casting text to a time is not immutable in general (it
 * reads the session's time zone when the text has none); ours always carries its offset, so the cast
 * is wrapped in a function declared immutable, which an index may use.
 */
export class Stats1732900000002 implements MigrationInterface {
  name = 'Stats1732900000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(
      `CREATE FUNCTION "${t.schema}".wait_since(wait jsonb) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT (wait->>'since')::timestamptz $$`,
    );
    await queryRunner.query(`CREATE INDEX runs_waiting_since_idx ON ${t.runs} ("${t.schema}".wait_since(wait)) WHERE status = 'waiting'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_waiting_since_idx`);
    await queryRunner.query(`DROP FUNCTION "${t.schema}".wait_since(jsonb)`);
  }
}
