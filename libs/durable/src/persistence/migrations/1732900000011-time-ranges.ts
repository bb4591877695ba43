import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * Time ranges for the dashboard: runs by creation and by last change (the runs list's range filter),
 * history by time (the overview's charts). BRIN indexes: a few pages for millions of rows, and next
 * to nothing to maintain on the engine's hot path, because these columns grow with the table's order.
 */
export class TimeRanges1732900000011 implements MigrationInterface {
  name = 'TimeRanges1732900000011';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`CREATE INDEX runs_created_brin ON ${t.runs} USING brin (created_at)`);
    await queryRunner.query(`CREATE INDEX runs_updated_brin ON ${t.runs} USING brin (updated_at)`);
    await queryRunner.query(`CREATE INDEX history_at_brin ON ${t.history} USING brin (at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    for (const index of ['runs_created_brin', 'runs_updated_brin', 'history_at_brin'])
      await queryRunner.query(`DROP INDEX "${t.schema}".${index}`);
  }
}
