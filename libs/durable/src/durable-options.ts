import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from './errors';
import type { DashboardOptions, DurableModuleOptions, GroupCommitOptions, MetricsOptions, RetentionOptions } from './interfaces';
import { isStorableText } from './schema/define-signal';
import { toMs } from './schema/duration';
import { keysOf, refuseUnknownKeys } from './schema/known-keys';
import type { RetentionAges } from './persistence/retention.repository';
import { tablesFor } from './persistence/tables';
import { rateWindowsOf, ResolvedQueue, resolveQueues } from './queues/queue-config';
import { DEFAULT_GROUP_COMMIT, GroupCommitPolicy } from './persistence/group-commit';

/** How many runs a sweep claims, or fails past their deadline, per statement, unless `sweeper.batchSize` says otherwise. */
const DEFAULT_SWEEP_BATCH = 100;

/** The sweep's batch, also where an instance has no sweeper (a claim pass a wake asks for, the testing module's drain). */
export const sweepBatchOf = (options: Pick<ResolvedDurableOptions, 'sweeper'>): number =>
  options.sweeper ? options.sweeper.batchSize : DEFAULT_SWEEP_BATCH;

/** Module options with every default filled in and every value checked. */
export interface ResolvedDurableOptions {
  connection: DurableModuleOptions['connection'];
  schema: string;
  migrationsRun: boolean;
  worker: { enabled: boolean; concurrency: number };
  sweeper: { intervalMs: number; batchSize: number } | false;
  leaseMs: number;
  inlineWaitMs: number;
  shutdownGraceMs: number;
  deadlineGraceMs: number;
  appVersion: string | null;
  dashboard: (DashboardOptions & { path: string }) | false;
  retention: ResolvedRetention | false;
  metrics: { registry?: unknown; prefix: string } | false;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  preparedStatements: boolean;
  queues: ReadonlyMap<string, ResolvedQueue>;
  groupCommit: GroupCommitPolicy | false;
}

export interface ResolvedRetention extends RetentionAges {
  intervalMs: number;
}

/** Fills defaults and fails the boot, with the fix, on any option that cannot work. */
export function resolveDurableOptions(options: DurableModuleOptions): ResolvedDurableOptions {
  if (!options || typeof options !== 'object')
    throw new InvalidArgumentError('DurableModule.forRoot needs an options object with at least `connection`.');
  if (!options.connection) {
    throw new InvalidArgumentError('DurableModule needs `connection`: a postgres URL, TypeORM Postgres options, or your DataSource.');
  }
  knownKeys(options);
  yesNo('migrationsRun', options.migrationsRun);
  yesNo('worker.enabled', options.worker?.enabled);
  yesNo('preparedStatements', options.preparedStatements);
  yesNo('dashboard.readOnly', options.dashboard ? options.dashboard.readOnly : undefined);
  const schema = options.schema ?? 'durable';
  tablesFor(schema);
  const sweeper =
    options.sweeper === false
      ? false
      : { intervalMs: options.sweeper?.intervalMs ?? 1_000, batchSize: options.sweeper?.batchSize ?? DEFAULT_SWEEP_BATCH };
  const leaseMs = options.leaseMs ?? 30_000;
  const queues = resolveQueues(options.queues);
  const resolved: ResolvedDurableOptions = {
    connection: options.connection,
    schema,
    migrationsRun: options.migrationsRun ?? true,
    worker: { enabled: options.worker?.enabled ?? true, concurrency: options.worker?.concurrency ?? 10 },
    sweeper,
    leaseMs,
    // A default follows the options it depends on, so that setting one never makes another's default invalid.
    inlineWaitMs: options.inlineWaitMs ?? Math.min(2_000, Math.floor(leaseMs / 2)),
    shutdownGraceMs: options.shutdownGraceMs ?? 10_000,
    deadlineGraceMs: toMs(options.deadlineGrace ?? '30s', 'deadlineGrace'),
    appVersion: resolveAppVersion(options.appVersion),
    dashboard: resolveDashboard(options.dashboard),
    retention: resolveRetention(options.retention, queues),
    metrics: options.metrics ? { registry: options.metrics.registry, prefix: options.metrics.prefix ?? 'durable_' } : false,
    statementTimeoutMs: options.statementTimeoutMs ?? 60_000,
    // A transaction of the module's left idle longer than a lease (its process stalled) would hold its row
    // locks past the lease, and the takeover of a lapsed lease skips locked rows: it ends at a lease.
    idleInTransactionTimeoutMs: options.idleInTransactionTimeoutMs ?? Math.min(60_000, leaseMs),
    preparedStatements: options.preparedStatements ?? true,
    queues,
    groupCommit: options.groupCommit === false ? false : { ...DEFAULT_GROUP_COMMIT, ...options.groupCommit },
  };
  // leaseMs first: the defaults of inlineWaitMs and idleInTransactionTimeoutMs follow it.
  positiveInteger('leaseMs', resolved.leaseMs, 1_000, 86_400_000);
  positiveInteger('statementTimeoutMs', resolved.statementTimeoutMs, 0, 86_400_000);
  positiveInteger('idleInTransactionTimeoutMs', resolved.idleInTransactionTimeoutMs, 0, 86_400_000);
  positiveInteger('worker.concurrency', resolved.worker.concurrency, 1, 10_000);
  positiveInteger(
    'inlineWaitMs',
    resolved.inlineWaitMs,
    0,
    Math.floor(resolved.leaseMs / 2),
    'half of leaseMs: a wait in-process holds its lease',
  );
  positiveInteger('shutdownGraceMs', resolved.shutdownGraceMs, 0, 3_600_000);
  if (resolved.groupCommit) {
    positiveInteger('groupCommit.maxInFlight', resolved.groupCommit.maxInFlight, 1, 64);
    positiveInteger('groupCommit.maxBatch', resolved.groupCommit.maxBatch, 1, 1_000);
  }
  if (sweeper) {
    positiveInteger('sweeper.intervalMs', sweeper.intervalMs, 10, 86_400_000);
    positiveInteger('sweeper.batchSize', sweeper.batchSize, 1, 10_000);
  }
  return resolved;
}

/** The keys of the module's options and of each of its options objects (keysOf stops compiling when a type changes). */
const OPTION_KEYS: ReadonlyArray<[string, readonly string[]]> = [
  [
    '',
    keysOf<DurableModuleOptions>({
      connection: true,
      schema: true,
      migrationsRun: true,
      worker: true,
      sweeper: true,
      leaseMs: true,
      inlineWaitMs: true,
      appVersion: true,
      deadlineGrace: true,
      shutdownGraceMs: true,
      dashboard: true,
      retention: true,
      metrics: true,
      statementTimeoutMs: true,
      idleInTransactionTimeoutMs: true,
      queues: true,
      preparedStatements: true,
      groupCommit: true,
    }),
  ],
  ['worker', keysOf<NonNullable<DurableModuleOptions['worker']>>({ enabled: true, concurrency: true })],
  ['sweeper', keysOf<Exclude<DurableModuleOptions['sweeper'], false | undefined>>({ intervalMs: true, batchSize: true })],
  ['dashboard', keysOf<DashboardOptions>({ path: true, auth: true, readOnly: true, readConnection: true, actor: true })],
  ['retention', keysOf<RetentionOptions>({ completed: true, failed: true, cancelled: true, intervalMs: true, batchSize: true })],
  ['metrics', keysOf<MetricsOptions>({ registry: true, prefix: true })],
  ['groupCommit', keysOf<GroupCommitOptions>({ maxInFlight: true, maxBatch: true })],
];

/** Fails the boot on a key that neither the options nor one of their objects takes, naming it and the keys there are. */
function knownKeys(options: DurableModuleOptions): void {
  for (const [where, keys] of OPTION_KEYS) {
    const given: unknown = where ? (options as unknown as Record<string, unknown>)[where] : options;
    if (given && typeof given === 'object') refuseUnknownKeys(given, keys, where ? `DurableModule option ${where}` : 'DurableModule');
  }
}

/** A yes/no option: a string from the environment ('false') would be taken as true. */
function yesNo(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean')
    throw new InvalidArgumentError(`DurableModule option ${name} must be true or false; got ${JSON.stringify(value)}.`);
}

/** `bound` says where a maximum that follows another option comes from. */
function positiveInteger(name: string, value: unknown, min: number, max: number, bound?: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      `DurableModule option ${name} must be a whole number from ${min} to ${max}${bound ? ` (${bound})` : ''}; got ${String(value)}.`,
    );
  }
}

const PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

function resolveDashboard(dashboard: DashboardOptions | false | undefined): (DashboardOptions & { path: string }) | false {
  if (!dashboard) return false;
  const how =
    "Choose one: auth: { guard: YourAuthGuard } (behind your app's login), { token: process.env.DASHBOARD_TOKEN } (a bearer token), or { insecureNoAuth: true } (local development only).";
  const auth = dashboard.auth as Record<string, unknown> | undefined;
  if (!auth || typeof auth !== 'object') throw new InvalidArgumentError(`The dashboard needs an auth option; it is never implicit. ${how}`);
  const modes = ['guard', 'token', 'insecureNoAuth'].filter((key) => auth[key] !== undefined);
  if (modes.length !== 1)
    throw new InvalidArgumentError(`The dashboard auth option must name exactly one mode; got ${modes.join(' and ') || 'none'}. ${how}`);
  if ('guard' in auth && typeof auth.guard !== 'function')
    throw new InvalidArgumentError(`dashboard.auth.guard must be a guard class (implements CanActivate). ${how}`);
  if ('token' in auth && (typeof auth.token !== 'string' || auth.token.length < 16)) {
    throw new InvalidArgumentError(
      'dashboard.auth.token must be a string of at least 16 characters (a random secret, e.g. from `openssl rand -hex 24`).',
    );
  }
  if ('insecureNoAuth' in auth && auth.insecureNoAuth !== true)
    throw new InvalidArgumentError(`dashboard.auth.insecureNoAuth must be exactly true. ${how}`);
  const read = dashboard.readConnection as unknown;
  if (
    read !== undefined &&
    !(typeof read === 'string' && read.length > 0) &&
    !(typeof read === 'object' && read !== null && !Array.isArray(read))
  )
    throw new InvalidArgumentError(
      'dashboard.readConnection must be a Postgres URL or connection options (a read replica), like connection.',
    );
  if (dashboard.actor !== undefined && typeof dashboard.actor !== 'function')
    throw new InvalidArgumentError('dashboard.actor must be a function of the request that returns who acted (a string), or undefined.');
  const path = (dashboard.path ?? '/durable').replace(/\/+$/, '');
  if (!PATH.test(path))
    throw new InvalidArgumentError(
      `dashboard.path "${dashboard.path}" must look like "/durable" or "/ops/durable" (letters, digits, . _ ~ -).`,
    );
  return { ...dashboard, path };
}

function resolveRetention(
  retention: RetentionOptions | false | undefined,
  queues: ReadonlyMap<string, ResolvedQueue>,
): ResolvedRetention | false {
  if (!retention) return false;
  const age = (kind: 'completed' | 'failed' | 'cancelled') =>
    retention[kind] === undefined ? undefined : toMs(retention[kind]!, `retention.${kind}`);
  const resolved: ResolvedRetention = {
    completed: age('completed'),
    failed: age('failed'),
    cancelled: age('cancelled'),
    intervalMs: retention.intervalMs ?? 60_000,
    batchSize: retention.batchSize ?? 500,
    rateWindows: rateWindowsOf(queues),
  };
  if (resolved.completed === undefined && resolved.failed === undefined && resolved.cancelled === undefined) {
    throw new InvalidArgumentError(
      "retention needs at least one age: { completed: '30d', failed: '90d', cancelled: '30d' } (a kind left out is kept forever).",
    );
  }
  positiveInteger('retention.intervalMs', resolved.intervalMs, 100, 86_400_000);
  positiveInteger('retention.batchSize', resolved.batchSize, 1, 100_000);
  return resolved;
}

/**
 * The version stamped on every run: as given, else the application's package.json version (npm sets
 * npm_package_version for scripts; otherwise the file in the working directory), else none.
 */
function resolveAppVersion(given: string | undefined): string | null {
  if (given !== undefined) {
    if (typeof given !== 'string' || !given.length || given.length > 100 || !isStorableText(given))
      throw new InvalidArgumentError(
        `appVersion must be a non-empty string of at most 100 characters, without a NUL character or a lone surrogate; got ${JSON.stringify(given)}.`,
      );
    return given;
  }
  // A found version that could not be stored (a NUL, a surrogate pair cut at 100 characters) is left out, not failed on.
  const storable = (version: unknown) =>
    typeof version === 'string' && isStorableText(version.slice(0, 100)) ? version.slice(0, 100) : null;
  if (process.env.npm_package_version) return storable(process.env.npm_package_version);
  try {
    return storable(JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).version);
  } catch {
    return null;
  }
}
