import { DataSource } from 'typeorm';
import type { DurableModuleOptions, PostgresDataSourceOptions } from '../interfaces';
import { InvalidArgumentError } from '../errors';
import { baseOptions, DurableDatabase } from './durable-database';
import { durableEntities } from './entities';
import type { PoolClient } from 'pg';
import { createJournalPartitionsSql, dropEmptiedJournalDays } from './journal-partitions';
import { DURABLE_MIGRATIONS } from './migrations';
import { tablesFor } from './tables';

/**
 * Applies the library's migrations to its schema under a session advisory lock, so any number of
 * instances booting at once run each migration exactly once, then makes the journal's partitions of
 * today and the two days ahead. Uses a short-lived DataSource of its
 * own, so that an application's DataSource keeps its own migrations list untouched.
 * Returns the names of the migrations applied by this call.
 */
export async function runDurableMigrations(options: MigrationTarget): Promise<string[]> {
  const { schema, dataSource } = await openMigrationDataSource(options);
  const lock = dataSource.createQueryRunner();
  try {
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`nestjs-durable:migrations:${schema}`]);
    await lock.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    await lock.query(createJournalPartitionsSql(tablesFor(schema)));
    return applied.map((m) => m.name);
  } finally {
    await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [`nestjs-durable:migrations:${schema}`]).catch(() => undefined);
    await lock.release();
    await dataSource.destroy();
  }
}

/**
 * Drops the journal partitions of the days no run is left of, as retention does at each cleanup: for a
 * team whose application's database user does not own the tables (migrations applied by a pipeline),
 * run by the role that migrates, daily. Returns the days dropped (none while another caller drops).
 */
export async function dropEmptiedJournal(options: MigrationTarget): Promise<string[]> {
  const { schema, dataSource } = await openMigrationDataSource(options);
  const runner = dataSource.createQueryRunner();
  try {
    return (await dropEmptiedJournalDays((await runner.connect()) as PoolClient, tablesFor(schema))) ?? [];
  } finally {
    await runner.release();
    await dataSource.destroy();
  }
}

/**
 * With `migrationsRun: false` the schema is the operator's to migrate: a boot on one that lacks any of
 * this version's migrations (never migrated, or a deploy ahead of its pipeline's migration) stops here,
 * naming them, instead of failing later on a missing table or column in the middle of a run.
 */
export async function assertMigrated(db: DurableDatabase): Promise<void> {
  const { schema } = db.tables;
  const [{ present }] = await db.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [`"${schema}".migrations`]);
  const applied = new Set(present ? (await db.query<{ name: string }>(`SELECT name FROM "${schema}".migrations`)).map((m) => m.name) : []);
  const missing = DURABLE_MIGRATIONS.map((migration) => new migration().name).filter((name) => !applied.has(name));
  if (missing.length) {
    throw new InvalidArgumentError(
      `The schema "${schema}" lacks ${missing.length} of the ${DURABLE_MIGRATIONS.length} migrations this version of nestjs-durable needs ` +
        `(${missing.join(', ')}), and migrationsRun is false: apply them before booting (runDurableMigrations) or set migrationsRun: true.`,
    );
  }
}

type MigrationTarget = Pick<DurableModuleOptions, 'connection' | 'schema'>;

async function openMigrationDataSource(options: MigrationTarget) {
  const { schema } = tablesFor(options.schema ?? 'durable');
  const base = baseOptions(options.connection);
  const dataSource = new DataSource({
    ...base,
    schema,
    entities: durableEntities(schema),
    migrations: DURABLE_MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    logging: false,
    // The application's extra may hold the connection itself (a connection string, ssl, a socket's host); its
    // timeouts are for its own statements, not for a migration's index build or the wait for another's lock.
    extra: {
      ...base.extra,
      max: 2,
      statement_timeout: 0, // 0: not sent, and the options below set the session's
      query_timeout: 0,
      lock_timeout: 0,
      idle_in_transaction_session_timeout: 0,
      options: [base.extra?.options, '-c statement_timeout=0 -c lock_timeout=0 -c idle_in_transaction_session_timeout=0']
        .filter(Boolean)
        .join(' '),
    },
  } as PostgresDataSourceOptions);
  await dataSource.initialize();
  return { schema, dataSource };
}
