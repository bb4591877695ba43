import { DynamicModule, Global, Inject, Module, NestModule, OnApplicationShutdown, Optional, Provider } from '@nestjs/common';
import { DiscoveryModule, HttpAdapterHost } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { RunStarter } from './client/run-starter';
import { SignalService } from './client/signal.service';
import { WorkflowClient } from './client/workflow.client';
import { DurableMetadataAccessor } from './discovery/durable-metadata.accessor';
import { DurableExplorer } from './discovery/durable.explorer';
import { WorkflowRegistry } from './runtime/workflow.registry';
import { CHILD_STARTER, DURABLE_DATA_SOURCE, DURABLE_OPTIONS } from './durable.constants';
import { resolveDurableOptions, ResolvedDurableOptions } from './durable-options';
import type { DurableModuleAsyncOptions, DurableModuleOptions } from './interfaces';
import { DeliveryRepository } from './persistence/delivery.repository';
import { DurableDatabase } from './persistence/durable-database';
import { GroupCommit, groupCommitOn } from './persistence/group-commit';
import { JournalRepository } from './persistence/journal.repository';
import { assertMigrated, runDurableMigrations } from './persistence/migrator';
import { RunControlRepository } from './persistence/run-control.repository';
import { RunRepository } from './persistence/run.repository';
import { RunEndRepository } from './persistence/run-end.repository';
import { DbClock } from './runtime/db-clock';
import { DurableHealth } from './health/durable-health';
import { DurableTelemetry } from './observability/durable-telemetry';
import { Executor } from './runtime/executor';
import { DurableWorker } from './worker/durable.worker';
import { WakeBus } from './runtime/wake-bus';
import { WakeListener } from './worker/wake-listener';
import { WakeSweeper } from './worker/wake-sweeper';
import { DeadlineExpiry } from './worker/deadline-expiry';
import { SchedulePass } from './worker/schedule-pass';
import { ScheduleRepository } from './persistence/schedule.repository';
import { QueueRepository } from './persistence/queue.repository';
import { QueueReasons } from './client/queue-reasons';
import { ScheduleService } from './client/schedule.service';
import { ScheduleReconciler } from './client/schedule-reconciler';
import { RetentionService } from './worker/retention.service';
import { JournalPartitionsService } from './worker/journal-partitions.service';
import { RunStatisticsService } from './worker/run-statistics.service';
import { createJournalPartitionsSql } from './persistence/journal-partitions';
import { RetentionRepository } from './persistence/retention.repository';
import { DashboardAuthGuard } from './dashboard/dashboard-auth.guard';
import { DashboardApiGate } from './dashboard/dashboard-api-gate';
import { DASHBOARD_CONTROLLERS, DashboardControllers, dashboardControllers } from './dashboard/dashboard-mount';
import { DashboardService } from './dashboard/dashboard.service';
import { RunChangeFeed } from './dashboard/run-change-feed';
import { DASHBOARD_READS, dashboardReadProviders } from './dashboard/dashboard-reads';

/** Connections beyond the executing runs: deliveries, claims, renewals, the dashboard. */
const SPARE_CONNECTIONS = 5;

const databaseProvider: Provider = {
  provide: DurableDatabase,
  inject: [DURABLE_OPTIONS],
  useFactory: async (options: ResolvedDurableOptions) => {
    if (options.migrationsRun) await runDurableMigrations(options);
    const db = await DurableDatabase.open(options, options.worker.concurrency + SPARE_CONNECTIONS);
    try {
      if (!options.migrationsRun) await assertMigrated(db);
      // Before anything writes: a journal row needs its day's partition.
      await db.query(createJournalPartitionsSql(db.tables));
    } catch (error) {
      await db.close(); // the pool would otherwise keep the failed boot's process alive
      throw error;
    }
    return db;
  },
};

const repository = <T>(type: new (db: DurableDatabase) => T): Provider => ({
  provide: type,
  inject: [DurableDatabase],
  useFactory: (db: DurableDatabase) => new type(db),
});

const providers: Provider[] = [
  databaseProvider,
  { provide: DURABLE_DATA_SOURCE, inject: [DurableDatabase], useFactory: (db: DurableDatabase) => db.dataSource },
  {
    provide: GroupCommit,
    inject: [DurableDatabase, DURABLE_OPTIONS],
    useFactory: (db: DurableDatabase, options: ResolvedDurableOptions) => groupCommitOn(db, options.groupCommit),
  },
  {
    provide: RunRepository,
    inject: [DurableDatabase, GroupCommit],
    useFactory: (db: DurableDatabase, group: GroupCommit) => new RunRepository(db, group),
  },
  {
    provide: JournalRepository,
    inject: [DurableDatabase, GroupCommit, DurableTelemetry],
    useFactory: (db: DurableDatabase, group: GroupCommit, telemetry: DurableTelemetry) =>
      new JournalRepository(db, group, telemetry.metrics && ((size) => telemetry.metrics!.checkpointBatchSize.observe(size))),
  },
  {
    provide: RunEndRepository,
    inject: [DurableDatabase, GroupCommit],
    useFactory: (db: DurableDatabase, group: GroupCommit) => new RunEndRepository(db, group),
  },
  repository(DeliveryRepository),
  repository(RunControlRepository),
  repository(RetentionRepository),
  repository(ScheduleRepository),
  repository(QueueRepository),
  RetentionService,
  JournalPartitionsService,
  RunStatisticsService,
  DbClock,
  DurableTelemetry,
  WakeBus,
  WorkflowRegistry,
  DurableMetadataAccessor,
  DurableExplorer,
  Executor,
  DurableWorker,
  WakeListener,
  WakeSweeper,
  DeadlineExpiry,
  SchedulePass,
  RunStarter,
  QueueReasons,
  { provide: CHILD_STARTER, useExisting: RunStarter },
  WorkflowClient,
  SignalService,
  ScheduleService,
  ScheduleReconciler,
  DurableHealth,
];

const dashboardProviders: Provider[] = [...dashboardReadProviders, DashboardService, DashboardAuthGuard, DashboardApiGate, RunChangeFeed];

const exported = [
  WorkflowClient,
  SignalService,
  ScheduleService,
  DURABLE_DATA_SOURCE,
  WorkflowRegistry,
  DurableHealth,
  RetentionService,
  DurableTelemetry,
];

/**
 * Durable workflows for a Nest application. Import once, in the root module; it is global, so every
 * module can inject WorkflowClient and SignalService, and every workflow provider is discovered.
 */
@Global()
@Module({})
export class DurableModule implements NestModule, OnApplicationShutdown {
  constructor(
    private readonly db: DurableDatabase,
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(DASHBOARD_CONTROLLERS) private readonly dashboard?: DashboardControllers,
    @Optional() private readonly gate?: DashboardApiGate,
    @Optional() @Inject(DASHBOARD_READS) private readonly reads?: DurableDatabase,
    @Optional() private readonly worker?: DurableWorker,
  ) {}

  /**
   * Runs before Nest registers routes, with the HTTP platform known: the dashboard's catch-alls take
   * its syntax, and the API's gate goes in ahead of every route.
   */
  configure(): void {
    const type = this.adapterHost.httpAdapter?.getType();
    if (!type) return;
    this.dashboard?.platform(type);
    this.gate?.beforeRoutes();
  }

  static forRoot(options: DurableModuleOptions): DynamicModule {
    const resolved = resolveDurableOptions(options);
    const dashboard = resolved.dashboard ? dashboardControllers() : undefined;
    dashboard?.mount(resolved.dashboard && resolved.dashboard.path);
    return DurableModule.build([{ provide: DURABLE_OPTIONS, useValue: resolved }], [], dashboard);
  }

  /**
   * Options from a factory, for ConfigService and friends: `{ imports, inject, useFactory }`. The
   * dashboard's routes are placed by the factory's result (it runs before Nest registers routes).
   */
  static forRootAsync(options: DurableModuleAsyncOptions): DynamicModule {
    const dashboard = dashboardControllers();
    const optionsProvider: Provider = {
      provide: DURABLE_OPTIONS,
      inject: options.inject ?? [],
      useFactory: async (...args: unknown[]) => {
        const resolved = resolveDurableOptions(await options.useFactory(...args));
        dashboard.mount(resolved.dashboard && resolved.dashboard.path);
        return resolved;
      },
    };
    return DurableModule.build([optionsProvider], options.imports ?? [], dashboard);
  }

  private static build(
    optionsProviders: Provider[],
    imports: NonNullable<DynamicModule['imports']>,
    dashboard: DashboardControllers | undefined,
  ): DynamicModule {
    return {
      module: DurableModule,
      global: true,
      imports: [DiscoveryModule, ScheduleModule.forRoot(), ...imports],
      controllers: dashboard?.controllers ?? [],
      providers: [
        ...optionsProviders,
        ...providers,
        ...(dashboard ? [...dashboardProviders, { provide: DASHBOARD_CONTROLLERS, useValue: dashboard }] : []),
      ],
      exports: exported,
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.settled(); // a run a late start claimed here is released before the pool closes
    if (this.reads && this.reads !== this.db) await this.reads.close();
    await this.db.close();
  }
}
