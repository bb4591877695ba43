import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/** The journal tables' autovacuum: after 5% of their rows changed or were inserted (PostgreSQL's default is 20%). */
const JOURNAL_VACUUM_OPTIONS = ['autovacuum_vacuum_scale_factor', 'autovacuum_vacuum_insert_scale_factor'].map((name) => `${name}=0.05`);
/** JOURNAL_VACUUM_OPTIONS as ALTER TABLE … SET takes them, and as pg_class.reloptions holds them (an array literal). */
export const JOURNAL_VACUUM = JOURNAL_VACUUM_OPTIONS.join(', ').replace(/=/g, ' = ');
export const JOURNAL_VACUUM_RELOPTIONS = `ARRAY[${JOURNAL_VACUUM_OPTIONS.map((option) => `'${option}'`).join(', ')}]`;

/**
 * An index for the retention cleanup, the caller's trace context on each run (so a run's spans join the trace that started it), and
 * autovacuum tuned for the hot tables: runs are updated at every claim, park and end, so vacuum them
 * after 5% of their rows changed rather than the default 20%; the append-mostly journal likewise.
 */
export class Operations1732900000001 implements MigrationInterface {
  name = 'Operations1732900000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`ALTER TABLE ${t.runs} ADD COLUMN trace_context text`);
    // The retention cleanup finds old finished runs through this, not through a scan of all runs.
    await queryRunner.query(`CREATE INDEX runs_finished_idx ON ${t.runs} (finished_at) WHERE finished_at IS NOT NULL`);
    await queryRunner.query(
      `ALTER TABLE ${t.runs} SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.05, fillfactor = 80)`,
    );
    for (const table of [t.steps, t.history, t.messages, t.signals]) {
      await queryRunner.query(`ALTER TABLE ${table} SET (${JOURNAL_VACUUM})`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    for (const table of [t.runs, t.steps, t.history, t.messages, t.signals]) {
      await queryRunner.query(
        `ALTER TABLE ${table} RESET (autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor, autovacuum_vacuum_insert_scale_factor, fillfactor)`,
      );
    }
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_finished_idx`);
    await queryRunner.query(`ALTER TABLE ${t.runs} DROP COLUMN trace_context`);
  }
}
