import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * `analyze_runs_if_due(min_changes)` gathers the runs table's planner statistics when they are due:
 * the table has changed (rows inserted, updated or deleted) by at least `min_changes` rows and by
 * more rows than it held at its last analysis, so while it grows faster than autovacuum looks (see
 * RunStatisticsService). Returns whether it analyzed. SECURITY DEFINER, with a fixed search_path, as
 * make_journal_partitions: it runs with the rights of the role that migrated (ANALYZE needs the
 * table's owner), so an application whose role owns nothing has its statistics gathered too.
 * SKIP_LOCKED: another session analyzing or vacuuming the table makes this call a no-op.
 */
export class RunStatistics1732900000016 implements MigrationInterface {
  name = 'RunStatistics1732900000016';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      CREATE FUNCTION ${t.analyzeRunsIfDue}(min_changes bigint) RETURNS boolean LANGUAGE plpgsql
      SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      BEGIN
        IF (SELECT pg_stat_get_mod_since_analyze(c.oid) < GREATEST(min_changes, c.reltuples)
            FROM pg_class c WHERE c.oid = '${t.runs}'::regclass) THEN
          RETURN false;
        END IF;
        ANALYZE (SKIP_LOCKED) ${t.runs};
        RETURN true;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP FUNCTION ${t.analyzeRunsIfDue}(bigint)`);
  }
}
