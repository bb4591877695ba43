import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, tablesFor } from '../tables';

/** The tables of ARCHITECTURE.md, with the indexes of the hot queries. */
export class InitialSchema1732900000000 implements MigrationInterface {
  name = 'InitialSchema1732900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    await queryRunner.query(`
      CREATE TABLE ${t.runs} (
        id text PRIMARY KEY,
        seq bigserial CONSTRAINT runs_seq_key UNIQUE,
        workflow text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending','running','waiting','completed','failed','cancelled')),
        input text,
        output text,
        error jsonb,
        wait jsonb,
        wait_kind text,
        wait_name text,
        wake_at timestamptz,
        attempt integer NOT NULL DEFAULT 1,
        attempt_base integer NOT NULL DEFAULT 0,
        lease_owner text,
        lease_token bigint NOT NULL DEFAULT 0,
        wake_seq bigint NOT NULL DEFAULT 0,
        parent_id text,
        parent_step text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      )`);
    // wake_at is "when must someone look at this run next": the wake time of a pending or waiting run,
    // the lease expiry of a running one. One partial index serves due runs and lapsed leases alike.
    await queryRunner.query(`CREATE INDEX runs_due_idx ON ${t.runs} (wake_at) WHERE wake_at IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX runs_status_idx ON ${t.runs} (status, seq DESC)`);
    await queryRunner.query(`CREATE INDEX runs_workflow_idx ON ${t.runs} (workflow, seq DESC)`);
    await queryRunner.query(`CREATE INDEX runs_waiting_idx ON ${t.runs} (wait_kind, wait_name) WHERE status = 'waiting'`);
    await queryRunner.query(`CREATE INDEX runs_parent_idx ON ${t.runs} (parent_id) WHERE parent_id IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE ${t.steps} (
        run_id text NOT NULL,
        key text NOT NULL,
        kind text NOT NULL,
        outcome text NOT NULL CHECK (outcome IN ('ok','error')),
        result text,
        error jsonb,
        started_at timestamptz,
        finished_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, key)
      )`);
    await queryRunner.query(`
      CREATE TABLE ${t.signals} (
        run_id text NOT NULL,
        name text NOT NULL,
        payload text,
        delivered_at timestamptz NOT NULL DEFAULT now(),
        source text,
        PRIMARY KEY (run_id, name)
      )`);
    await queryRunner.query(`
      CREATE TABLE ${t.messages} (
        run_id text NOT NULL,
        channel text NOT NULL,
        key text NOT NULL,
        seq bigint NOT NULL,
        payload text,
        sent_at timestamptz NOT NULL DEFAULT now(),
        acked_at timestamptz,
        source text,
        PRIMARY KEY (run_id, channel, key),
        UNIQUE (run_id, channel, seq)
      )`);
    await queryRunner.query(`
      CREATE TABLE ${t.history} (
        id bigserial PRIMARY KEY,
        run_id text NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        event text NOT NULL,
        actor text NOT NULL,
        detail jsonb
      )`);
    await queryRunner.query(`CREATE INDEX history_run_idx ON ${t.history} (run_id, id)`);
    await queryRunner.query(`
      CREATE TABLE ${t.instances} (
        id text PRIMARY KEY,
        started_at timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now(),
        last_sweep_at timestamptz,
        detail jsonb
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    for (const table of [t.instances, t.history, t.messages, t.signals, t.steps, t.runs]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
