import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, Tables, tablesFor } from '../tables';
import { JOURNAL_VACUUM } from './1732900000001-operations';
import { makeJournalPartitionsSql } from './1732900000013-partitioned-journal';

/**
 * The journal's partitions vacuum after 5% of their rows changed or were inserted, as the plain tables
 * before them did (Operations1732900000001): a partition made by LIKE takes none of its parent's table
 * options, so the day partitions (and history_standing) had PostgreSQL's 20%. The function that makes
 * the days sets it on each from now on; those made before get it here. The `_legacy` partitions, the
 * plain tables of before, kept theirs.
 */
export class JournalPartitionVacuum1732900000021 implements MigrationInterface {
  name = 'JournalPartitionVacuum1732900000021';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(makeJournalPartitionsSql(t, true));
    for (const part of await partitions(queryRunner, t))
      await queryRunner.query(`ALTER TABLE "${t.schema}"."${part}" SET (${JOURNAL_VACUUM})`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(makeJournalPartitionsSql(t));
    for (const part of await partitions(queryRunner, t))
      await queryRunner.query(
        `ALTER TABLE "${t.schema}"."${part}" RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_insert_scale_factor)`,
      );
  }
}

/** The journal's partitions but the `_legacy` ones. */
async function partitions(queryRunner: QueryRunner, t: Tables): Promise<string[]> {
  const rows: Array<{ relname: string }> = await queryRunner.query(
    `SELECT c.relname FROM pg_inherits i
     JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'r' AND p.relname IN ('steps', 'signals', 'messages', 'history') AND c.relname NOT LIKE '%\\_legacy'`,
    [t.schema],
  );
  return rows.map((row) => row.relname);
}
