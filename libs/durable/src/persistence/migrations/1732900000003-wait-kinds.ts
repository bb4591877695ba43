import { MigrationInterface, QueryRunner } from 'typeorm';
import { replaceWaitKindCheckSql } from '../sql/wait-kinds.sql';
import { schemaOf, tablesFor } from '../tables';

/**
 * The wait kinds registered when this migration shipped (wait-kinds/wait-kind.registry.ts). A
 * migration is history, so the list is written out, not read from the registry: a database migrated
 * by this version keeps exactly these until a later migration replaces the CHECK with its own list.
 * A test compares the CHECK a fresh schema ends with against the registry, so a kind added without
 * its migration fails the suite (see docs/architecture.md, "Adding a wait kind").
 */
const WAIT_KINDS_1732900000003 = ['signal', 'sleep', 'channel', 'child', 'retry'];

/** A CHECK on runs.wait_kind: the database refuses a run parked on a kind the library does not know. */
export class WaitKinds1732900000003 implements MigrationInterface {
  name = 'WaitKinds1732900000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(replaceWaitKindCheckSql(tablesFor(schemaOf(queryRunner)), WAIT_KINDS_1732900000003));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ${tablesFor(schemaOf(queryRunner)).runs} DROP CONSTRAINT runs_wait_kind_check`);
  }
}
