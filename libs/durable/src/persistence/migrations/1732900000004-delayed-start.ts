import { MigrationInterface, QueryRunner } from 'typeorm';
import { replaceWaitKindCheckSql } from '../sql/wait-kinds.sql';
import { schemaOf, tablesFor } from '../tables';

/** The kinds before this migration (1732900000003) and after it: `start`, a delayed start, is new. */
const BEFORE = ['signal', 'sleep', 'channel', 'child', 'retry'];
const WAIT_KINDS_1732900000004 = [...BEFORE, 'start'];

/** The wait kind `start`: a run started with `startAt` or `delay` waits for its instant. */
export class DelayedStart1732900000004 implements MigrationInterface {
  name = 'DelayedStart1732900000004';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(replaceWaitKindCheckSql(tablesFor(schemaOf(queryRunner)), WAIT_KINDS_1732900000004));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(replaceWaitKindCheckSql(tablesFor(schemaOf(queryRunner)), BEFORE));
  }
}
