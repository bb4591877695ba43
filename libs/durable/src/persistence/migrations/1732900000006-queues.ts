import { MigrationInterface, QueryRunner } from 'typeorm';
import { replaceWaitKindCheckSql } from '../sql/wait-kinds.sql';
import { schemaOf, tablesFor } from '../tables';

/** The kinds before this migration (1732900000004) and after it: `queue`, a run waiting for a slot, is new. */
const BEFORE = ['signal', 'sleep', 'channel', 'child', 'retry', 'start'];
const WAIT_KINDS_1732900000006 = [...BEFORE, 'queue'];

/**
 * Flow control. A run's queue and its place in it (partition key, priority), its deduplication id
 * and debounce key, and `began_at` (its first execution: the rate window counts it). Pending and
 * waiting runs of a queue leave `runs_due_idx`, which the plain claim reads: only the admission
 * under the queue's lock takes them, from the queue's own indexes (its running runs, by partition;
 * its pending runs, by priority then due time; the rate window). Deduplication and debounce are
 * unique partial indexes, so two starts at once cannot both create a run.
 */
export class Queues1732900000006 implements MigrationInterface {
  name = 'Queues1732900000006';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      ALTER TABLE ${t.runs}
        ADD COLUMN queue text,
        ADD COLUMN partition_key text,
        ADD COLUMN priority integer NOT NULL DEFAULT 100,
        ADD COLUMN deduplication_id text,
        ADD COLUMN debounce_key text,
        ADD COLUMN debounce_until timestamptz,
        ADD COLUMN began_at timestamptz`);
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_due_idx`);
    await queryRunner.query(
      `CREATE INDEX runs_due_idx ON ${t.runs} (wake_at) WHERE wake_at IS NOT NULL AND (queue IS NULL OR status = 'running')`,
    );
    await queryRunner.query(
      `CREATE INDEX runs_queue_running_idx ON ${t.runs} (queue, partition_key) WHERE status = 'running' AND queue IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX runs_queue_pending_idx ON ${t.runs} (queue, priority, wake_at) WHERE status = 'pending' AND queue IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX runs_queue_partition_idx ON ${t.runs} (queue, partition_key, priority, wake_at) WHERE status = 'pending' AND queue IS NOT NULL AND partition_key IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX runs_queue_waking_idx ON ${t.runs} (wake_at) WHERE status = 'waiting' AND queue IS NOT NULL AND wake_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX runs_queue_began_idx ON ${t.runs} (queue, began_at) WHERE queue IS NOT NULL AND began_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX runs_deduplication_key ON ${t.runs} (queue, deduplication_id) WHERE deduplication_id IS NOT NULL AND status IN ('pending','running','waiting')`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX runs_debounce_key ON ${t.runs} (workflow, debounce_key) WHERE debounce_key IS NOT NULL AND began_at IS NULL AND status IN ('pending','waiting')`,
    );
    await queryRunner.query(`ALTER TABLE ${t.runs} ADD CONSTRAINT runs_priority_check CHECK (priority BETWEEN 0 AND 1000)`);
    await queryRunner.query(replaceWaitKindCheckSql(t, WAIT_KINDS_1732900000006));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(replaceWaitKindCheckSql(t, BEFORE));
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_due_idx`);
    await queryRunner.query(`
      ALTER TABLE ${t.runs}
        DROP CONSTRAINT runs_priority_check,
        DROP COLUMN queue, DROP COLUMN partition_key, DROP COLUMN priority, DROP COLUMN deduplication_id,
        DROP COLUMN debounce_key, DROP COLUMN debounce_until, DROP COLUMN began_at`);
    await queryRunner.query(`CREATE INDEX runs_due_idx ON ${t.runs} (wake_at) WHERE wake_at IS NOT NULL`);
  }
}
