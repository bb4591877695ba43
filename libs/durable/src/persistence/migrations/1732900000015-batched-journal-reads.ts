import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';
import { journalJsonSql } from './1732900000013-partitioned-journal';

/**
 * `journals_of(runs, days)` reads the journals of several runs (a claim's or an admission's batch) in
 * one call: the runs of each day in one statement, pruned to that day's partitions once, where
 * journal_of per run pays a function call and an executor start-up for each (at 64 runs, about 1.7
 * against 0.7 ms, measured); a claim of one run pays about 30 µs more than journal_of would (the loop
 * over days), measured at 270 against 240 µs a round trip. `runs` and `days` pair up by position.
 * STABLE: it reads the calling statement's snapshot, as journal_of does.
 */
export class BatchedJournalReads1732900000015 implements MigrationInterface {
  name = 'BatchedJournalReads1732900000015';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      CREATE FUNCTION ${t.journalsOf}(p_runs text[], p_days date[]) RETURNS TABLE (run text, journal json) LANGUAGE plpgsql STABLE
      SET plan_cache_mode = force_generic_plan AS $$
      DECLARE
        d date;
      BEGIN
        FOR d IN SELECT DISTINCT u FROM unnest(p_days) u LOOP
          RETURN QUERY SELECT r.id, ${journalJsonSql(t, 'r.id', 'd')}
                       FROM unnest(p_runs, p_days) AS r(id, day) WHERE r.day = d;
        END LOOP;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP FUNCTION ${t.journalsOf}(text[], date[])`);
  }
}
