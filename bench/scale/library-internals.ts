import { dirname, join } from 'node:path';

// The library's own hot-path SQL is not part of its public surface (the package's `exports` map hides
// it), but the bench must time exactly the statement the worker runs: load it from the build by path.
const dist = dirname(require.resolve('nestjs-durable'));
const internal = <T>(path: string): T => require(join(dist, path)) as T;

export const { claimRunsSql } =
  internal<typeof import('nestjs-durable/dist/persistence/sql/claim-runs.sql')>('persistence/sql/claim-runs.sql');
export const { tablesFor } = internal<typeof import('nestjs-durable/dist/persistence/tables')>('persistence/tables');
export const { DashboardRepository } =
  internal<typeof import('nestjs-durable/dist/persistence/dashboard.repository')>('persistence/dashboard.repository');
export const { ScheduleRepository } =
  internal<typeof import('nestjs-durable/dist/persistence/schedule.repository')>('persistence/schedule.repository');
export const { SchedulePass, SCHEDULES_PER_TRANSACTION } =
  internal<typeof import('nestjs-durable/dist/worker/schedule-pass')>('worker/schedule-pass');
export const { wakeChannel } = internal<typeof import('nestjs-durable/dist/durable.constants')>('durable.constants');
export const { admitQueuedSql, ADMISSION_PLANS_SQL } =
  internal<typeof import('nestjs-durable/dist/persistence/sql/admit-queued.sql')>('persistence/sql/admit-queued.sql');
export const { RunRepository } = internal<typeof import('nestjs-durable/dist/persistence/run.repository')>('persistence/run.repository');
export const { DeliveryRepository } =
  internal<typeof import('nestjs-durable/dist/persistence/delivery.repository')>('persistence/delivery.repository');
export const { createJournalPartitionsSql, dropEmptiedJournalDays } =
  internal<typeof import('nestjs-durable/dist/persistence/journal-partitions')>('persistence/journal-partitions');
