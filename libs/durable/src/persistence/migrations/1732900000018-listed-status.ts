import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/**
 * The dashboard's indexes on a status (the runs list's, and the oldest wait's) keyed and filtered on
 * `lower(status)` (`listedStatus`), which no engine statement writes. The engine's probes for other
 * runs (a pending run of a freed slot's queue, a run parked on an ended one) write `status = …`
 * plainly, as the partial indexes meant for them need; with statistics that saw none of that status,
 * the planner tied those indexes with `(status, seq)` or the oldest wait's and could take either,
 * reading every run of the status on each end. The list's index carries `status` itself (INCLUDE): the
 * overview's counts by status are then read from the index alone (Postgres answers from an index on an
 * expression only when it holds the column too), where without it a count by a status the statistics
 * call common read the table. Built in one statement each, not CONCURRENTLY (a migration runs in a
 * transaction): the runs table is locked against writes while they build, about 2 s at a million runs
 * on the bench's machine.
 */
export class ListedStatus1732900000018 implements MigrationInterface {
  name = 'ListedStatus1732900000018';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_status_idx, "${t.schema}".runs_waiting_since_idx`);
    await queryRunner.query(`CREATE INDEX runs_listed_status_idx ON ${t.runs} (lower(status), seq DESC) INCLUDE (status)`);
    await queryRunner.query(
      `CREATE INDEX runs_waiting_since_idx ON ${t.runs} ("${t.schema}".wait_since(wait)) WHERE lower(status) = 'waiting'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`DROP INDEX "${t.schema}".runs_listed_status_idx, "${t.schema}".runs_waiting_since_idx`);
    await queryRunner.query(`CREATE INDEX runs_status_idx ON ${t.runs} (status, seq DESC)`);
    await queryRunner.query(`CREATE INDEX runs_waiting_since_idx ON ${t.runs} ("${t.schema}".wait_since(wait)) WHERE status = 'waiting'`);
  }
}
