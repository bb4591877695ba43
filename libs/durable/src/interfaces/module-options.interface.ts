import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { Duration } from './duration.interface';
import type { QueueOptions } from './queue.interface';
import type { PostgresDataSourceOptions as TypeOrmPostgresOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions';

export type PostgresDataSourceOptions = Omit<TypeOrmPostgresOptions, 'entities' | 'migrations'>;

/** Options of `DurableModule.forRoot`. */
export interface DurableModuleOptions {
  /** A URL, TypeORM Postgres options, or the application's own DataSource (to share transactions). */
  connection: string | PostgresDataSourceOptions | DataSource;
  /** Postgres schema for all tables, default `'durable'`: lower-case letters, digits and underscores, at most 48. */
  schema?: string;
  /**
   * Apply the library's migrations at boot (default true); safe with many instances booting at once.
   * False: the schema must have them already (a boot that finds any missing fails, naming them).
   */
  migrationsRun?: boolean;
  /** Default enabled with 10 runs at once; disabled: this instance starts runs and delivers signals only. */
  worker?: { enabled?: boolean; concurrency?: number };
  /**
   * The wake sweeper (on a worker instance): default every 1000 ms, 100 runs per statement (claimed, or
   * failed as runs whose deadline passed before they began). False: none on this instance.
   */
  sweeper?: { intervalMs?: number; batchSize?: number } | false;
  /** Default 30 000; a run whose lease lapses is taken over by another instance. */
  leaseMs?: number;
  /** Default the smaller of 2 000 and half of `leaseMs`; a wait with at most this much left waits in-process instead of parking. */
  inlineWaitMs?: number;
  /** Stamped on every run when it is created (`RunView.appVersion`); default the application's package.json version. Never gates recovery. */
  appVersion?: string;
  /** Default '30s': how long a run goes on after its deadline to clean up before it is failed (a workflow's own `deadlineGrace` wins). */
  deadlineGrace?: Duration;
  /** Default 10 000: how long shutdown lets executions in flight finish before releasing them. */
  shutdownGraceMs?: number;
  /** The operator dashboard and its REST API; default false (not mounted). */
  dashboard?: DashboardOptions | false;
  /** Deletes finished runs and their journal once they are older than these ages; default false (keep everything). */
  retention?: RetentionOptions | false;
  /** Prometheus metrics through prom-client (an optional peer); default false. */
  metrics?: MetricsOptions | false;
  /**
   * Server-side timeouts of the module's own connections (when `connection` is a URL or options; an
   * application's DataSource keeps its own settings). Defaults: 60 000 ms for a statement; for an idle
   * transaction, `leaseMs` (at most 60 000), so a stalled process's locks do not outlast its leases.
   */
  statementTimeoutMs?: number;
  idleInTransactionTimeoutMs?: number;
  /** Named queues with cluster-wide limits; a workflow joins one with `@Workflow(name, { queue })` or `start(…, { queue })`. */
  queues?: Record<string, QueueOptions>;
  /** Send the library's statements as named prepared statements (default true); false behind PgBouncer in transaction mode. */
  preparedStatements?: boolean;
  /**
   * Group commit of checkpoints, timers, runs' ends and the starts this instance executes at once
   * (no caller transaction, parent, queue or delay): those written while a batch is in flight go out
   * together when it returns, every kind in one transaction and one commit (a statement per kind, in
   * one round trip); a lone write leaves at once. Default `{ maxInFlight: 1, maxBatch: 64 }`; false:
   * each write is its own statement and commit.
   */
  groupCommit?: GroupCommitOptions | false;
}

export interface GroupCommitOptions {
  /** Batches on the wire at once, 1 to 64; default 1. */
  maxInFlight?: number;
  /** Writes per batch at most, 1 to 1000; default 64. */
  maxBatch?: number;
}

/** What the scheduled cleanup keeps, by how a run ended. A kind left out is kept forever. */
export interface RetentionOptions {
  completed?: Duration;
  failed?: Duration;
  cancelled?: Duration;
  /** How often the cleanup runs (one instance at a time); default 60 000 ms. */
  intervalMs?: number;
  /** Runs deleted per transaction, so the cleanup never holds long locks; default 500. */
  batchSize?: number;
}

export interface MetricsOptions {
  /** The prom-client Registry to register in; default prom-client's global `register`. */
  registry?: unknown;
  /** Metric name prefix; default `durable_`. */
  prefix?: string;
}

/** Options of the dashboard (UI at `path`, REST API at `${path}/api`). */
export interface DashboardOptions {
  path?: string;
  auth: { guard: Type<CanActivate> } | { token: string } | { insecureNoAuth: true };
  /** List and inspect only: every mutating endpoint answers 403. */
  readOnly?: boolean;
  /**
   * A read replica for the dashboard's reads (runs list, run pages, stats, charts, live updates): a URL
   * or options, like `connection`. Its actions still go to the primary. Reads trail writes by the
   * replica's lag. Default: the module's own connection.
   */
  readConnection?: string | PostgresDataSourceOptions;
  /**
   * Who acted, as the history records it, from the signed-in request (its `user`, a header, a session).
   * Undefined falls back to the default: with `guard`, the user's id, username, name or email; with
   * `token`, the name the operator gave at sign-in (header `x-durable-operator`) and "(token)".
   */
  actor?: (request: any) => string | undefined | Promise<string | undefined>;
}

/** `DurableModule.forRootAsync`: options from a factory, with its imports and injections. */
export interface DurableModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: Array<Type<unknown> | string | symbol>;
  useFactory: (...args: any[]) => DurableModuleOptions | Promise<DurableModuleOptions>;
}
