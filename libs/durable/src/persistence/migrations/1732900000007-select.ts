import { MigrationInterface, QueryRunner } from 'typeorm';
import { replaceWaitKindCheckSql } from '../sql/wait-kinds.sql';
import { schemaOf, tablesFor } from '../tables';

/** The kinds before this migration (1732900000006) and after it: `select`, the first of several things, is new. */
const BEFORE = ['signal', 'sleep', 'channel', 'child', 'retry', 'start', 'queue'];
const WAIT_KINDS_1732900000007 = [...BEFORE, 'select'];

/** The wait kind `select`: a run waits for the first of its arms (signals, messages, children, timers). */
export class Select1732900000007 implements MigrationInterface {
  name = 'Select1732900000007';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(replaceWaitKindCheckSql(tablesFor(schemaOf(queryRunner)), WAIT_KINDS_1732900000007));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(replaceWaitKindCheckSql(tablesFor(schemaOf(queryRunner)), BEFORE));
  }
}
