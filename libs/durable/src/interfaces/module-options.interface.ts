import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions as TypeOrmPostgresOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions';

export type PostgresDataSourceOptions = Omit<TypeOrmPostgresOptions, 'entities' | 'migrations'>;

/** Options of `DurableModule.forRoot`. */
export interface DurableModuleOptions {
  /** A URL, TypeORM Postgres options, or the application's own DataSource (to share transactions). */
  connection: string | PostgresDataSourceOptions | DataSource;
  /** Postgres schema for all tables, default `'durable'`. */
  schema?: string;
  /** Apply the library's migrations at boot (default true); safe with many instances booting at once. */
  migrationsRun?: boolean;
  /** Default enabled with 10 runs at once; disabled: this instance starts runs and delivers signals only. */
  worker?: { enabled?: boolean; concurrency?: number };
  /** The wake sweeper: default every 1000 ms, 100 runs per sweep. */
  sweeper?: { intervalMs?: number; batchSize?: number } | false;
  /** Default 30 000; a run whose lease lapses is taken over by another instance. */
  leaseMs?: number;
  /** Default 2 000; a wait with at most this much left waits in-process instead of parking. */
  inlineWaitMs?: number;
  /** Default 10 000: how long shutdown lets executions in flight finish before releasing them. */
  shutdownGraceMs?: number;
  /** The operator dashboard and its REST API; default false (not mounted). */
  dashboard?: DashboardOptions | false;
}

/** Options of the dashboard (UI at `path`, REST API at `${path}/api`). */
export interface DashboardOptions {
  path?: string;
  auth: { guard: Type<CanActivate> } | { token: string } | { insecureNoAuth: true };
  /** List and inspect only: every mutating endpoint answers 403. */
  readOnly?: boolean;
}

/** `DurableModule.forRootAsync`: options from a factory, with its imports and injections. */
export interface DurableModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: Array<Type<unknown> | string | symbol>;
  useFactory: (...args: any[]) => DurableModuleOptions | Promise<DurableModuleOptions>;
}
