import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * Durable schedules: one row per schedule (its spec, where its slots stand, the operator's pause) and
 * a record of the slots that started no run. The sweeper's schedule pass reads only the schedules due
 * (`schedules_due_idx` on next_fire_at), so its cost follows the due schedules, not all of them.
 */
export class Schedules1732900000005 implements MigrationInterface {
  name = 'Schedules1732900000005';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      CREATE TABLE ${t.schedules} (
        name text PRIMARY KEY,
        workflow text NOT NULL,
        source text NOT NULL CONSTRAINT schedules_source_check CHECK (source IN ('decorator','api')),
        cron text NOT NULL,
        timezone text NOT NULL,
        overlap text NOT NULL CONSTRAINT schedules_overlap_check CHECK (overlap IN ('skip','bufferOne','allow','cancelOther')),
        catchup_window_ms bigint NOT NULL,
        catchup text NOT NULL CONSTRAINT schedules_catchup_check CHECK (catchup IN ('latest','all')),
        input text NOT NULL,
        jitter_ms bigint NOT NULL DEFAULT 0,
        paused boolean NOT NULL DEFAULT false,
        workflow_missing boolean NOT NULL DEFAULT false,
        last_slot timestamptz NOT NULL,
        next_fire_at timestamptz,
        buffered_slot timestamptz,
        last_run_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX schedules_due_idx ON ${t.schedules} (next_fire_at) WHERE next_fire_at IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE ${t.scheduleSkips} (
        id bigserial PRIMARY KEY,
        schedule text NOT NULL,
        slot timestamptz NOT NULL,
        reason text NOT NULL CONSTRAINT schedule_skips_reason_check CHECK (reason IN ('overlap','missed','paused')),
        at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT schedule_skips_slot_key UNIQUE (schedule, slot)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP TABLE ${t.scheduleSkips}`);
    await queryRunner.query(`DROP TABLE ${t.schedules}`);
  }
}
