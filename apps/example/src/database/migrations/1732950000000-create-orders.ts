import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateOrders1732950000000 implements MigrationInterface {
  name = 'CreateOrders1732950000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE orders (
        id text PRIMARY KEY,
        customer text NOT NULL,
        amount_cents integer NOT NULL,
        status text NOT NULL,
        tracking jsonb NOT NULL DEFAULT '[]',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE payments (
        idempotency_key text PRIMARY KEY,
        order_id text NOT NULL,
        kind text NOT NULL,
        amount_cents integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE payments');
    await queryRunner.query('DROP TABLE orders');
  }
}
