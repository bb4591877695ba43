import { Logger, Provider } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { DashboardRepository } from '../persistence/dashboard.repository';
import { DurableDatabase } from '../persistence/durable-database';
import { QueueRepository } from '../persistence/queue.repository';
import { RunRepository } from '../persistence/run.repository';

/** The database the dashboard reads from: `dashboard.readConnection` (a replica), else the module's own. */
export const DASHBOARD_READS = Symbol('nestjs-durable:dashboard-reads');
/** Runs as the dashboard lists and shows them, read from DASHBOARD_READS. */
export const DASHBOARD_RUN_READS = Symbol('nestjs-durable:dashboard-run-reads');
/** Queues as the dashboard shows them (their load, and why a pending run waits), read from DASHBOARD_READS. */
export const DASHBOARD_QUEUE_READS = Symbol('nestjs-durable:dashboard-queue-reads');

/** Connections of the read pool: a few operators' pages and one change feed. */
const READ_POOL = 4;

/**
 * The dashboard's read side. Its lists, run pages, queues, stats, charts and change feed go to a read replica
 * when one is configured, so an operator's heavy query never competes with the workers; what it does
 * (start, deliver, cancel, bulk actions and the runs they select) goes to the primary, through the client.
 * A replica that cannot be reached at boot is left for the primary, with a warning.
 */
export const dashboardReadProviders: Provider[] = [
  {
    provide: DASHBOARD_READS,
    inject: [DURABLE_OPTIONS, DurableDatabase],
    useFactory: async (options: ResolvedDurableOptions, db: DurableDatabase) => {
      const read = options.dashboard ? options.dashboard.readConnection : undefined;
      if (!read) return db;
      try {
        return await DurableDatabase.open({ ...options, connection: read }, READ_POOL);
      } catch (error) {
        // The replica serves the dashboard, not the engine: one down at boot must not keep the workers from starting.
        new Logger('DurableDashboard').warn(
          `The dashboard's readConnection cannot be reached (${(error as Error).message}); the dashboard reads from the primary until the application restarts.`,
        );
        return db;
      }
    },
  },
  { provide: DASHBOARD_RUN_READS, inject: [DASHBOARD_READS], useFactory: (db: DurableDatabase) => new RunRepository(db) },
  { provide: DASHBOARD_QUEUE_READS, inject: [DASHBOARD_READS], useFactory: (db: DurableDatabase) => new QueueRepository(db) },
  { provide: DashboardRepository, inject: [DASHBOARD_READS], useFactory: (db: DurableDatabase) => new DashboardRepository(db) },
];
