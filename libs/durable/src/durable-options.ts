import { InvalidArgumentError } from './errors';
import type { DashboardOptions, DurableModuleOptions } from './interfaces';
import { tablesFor } from './persistence/tables';

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
  dashboard: DashboardOptions | false;
}

/** Fills defaults and fails the boot, with the fix, on any option that cannot work. */
export function resolveDurableOptions(options: DurableModuleOptions): ResolvedDurableOptions {
  if (!options || typeof options !== 'object') throw new InvalidArgumentError('DurableModule.forRoot needs an options object with at least `connection`.');
  if (!options.connection) {
    throw new InvalidArgumentError('DurableModule needs `connection`: a postgres URL, TypeORM Postgres options, or your DataSource.');
  }
  const schema = options.schema ?? 'durable';
  tablesFor(schema);
  const sweeper = options.sweeper === false ? false : { intervalMs: options.sweeper?.intervalMs ?? 1_000, batchSize: options.sweeper?.batchSize ?? 100 };
  const resolved: ResolvedDurableOptions = {
    connection: options.connection,
    schema,
    migrationsRun: options.migrationsRun ?? true,
    worker: { enabled: options.worker?.enabled ?? true, concurrency: options.worker?.concurrency ?? 10 },
    sweeper,
    leaseMs: options.leaseMs ?? 30_000,
    inlineWaitMs: options.inlineWaitMs ?? 2_000,
    shutdownGraceMs: options.shutdownGraceMs ?? 10_000,
    dashboard: options.dashboard ?? false,
  };
  positiveInteger('worker.concurrency', resolved.worker.concurrency, 1, 10_000);
  positiveInteger('leaseMs', resolved.leaseMs, 1_000, 86_400_000);
  positiveInteger('inlineWaitMs', resolved.inlineWaitMs, 0, resolved.leaseMs / 2);
  positiveInteger('shutdownGraceMs', resolved.shutdownGraceMs, 0, 3_600_000);
  if (sweeper) {
    positiveInteger('sweeper.intervalMs', sweeper.intervalMs, 10, 86_400_000);
    positiveInteger('sweeper.batchSize', sweeper.batchSize, 1, 10_000);
  }
  return resolved;
}

function positiveInteger(name: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`DurableModule option ${name} must be a whole number from ${min} to ${max}; got ${String(value)}.`);
  }
}
