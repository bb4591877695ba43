import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { DurableDatabase } from '../persistence/durable-database';
import { analyzeRunsSql, runsStatisticsDueSql, YOUNG_TABLE_ROWS } from '../persistence/runs-statistics';
import { scheduleInterval, stopInterval } from './scheduled-interval';

/** How often a worker instance looks at the runs table's statistics: a read of two counters. */
const EVERY_SECOND = 1_000;

/**
 * Gathers the runs table's planner statistics while the table is young, before autovacuum's first
 * passes. The library's statements are prepared, and Postgres keeps a prepared statement's plan until
 * the statistics of a table it reads change: a plan made while the table held a few rows (a hashed
 * sequential scan of runs, an index chosen on a tie) would be kept as it grew to millions. Each
 * ANALYZE makes every session plan again for the table as it is. Due only while the table doubles
 * (runsStatisticsDueSql), so a few times in its life; after that autovacuum, which gathers them once a
 * tenth has changed, keeps them current.
 */
@Injectable()
export class RunStatisticsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DurableStatistics');
  private readonly sql;
  private running?: Promise<boolean>;
  private failing = false;

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly scheduler: SchedulerRegistry,
    private readonly db: DurableDatabase,
  ) {
    this.sql = { due: runsStatisticsDueSql(db.tables), analyze: analyzeRunsSql(db.tables) };
  }

  private get name(): string {
    return `nestjs-durable:statistics:${this.options.schema}`;
  }

  onApplicationBootstrap(): void {
    if (!this.options.worker.enabled) return;
    scheduleInterval(this.scheduler, this.name, EVERY_SECOND, () => void this.tick());
  }

  async beforeApplicationShutdown(): Promise<void> {
    stopInterval(this.scheduler, this.name);
    await this.running?.catch(() => undefined);
  }

  /** One look; a failure is logged once until a look succeeds again (the database may be down for a while). */
  private async tick(): Promise<void> {
    try {
      await this.refresh();
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        this.logger.warn(`Could not look at the runs table's statistics (tried again every second): ${(error as Error).message}`);
      this.failing = true;
    }
  }

  /** Gathers the statistics when they are due; true when it did. One at a time per instance. */
  refresh(): Promise<boolean> {
    this.running ??= (async () => {
      const [{ due }] = await this.db.query<{ due: boolean }>(this.sql.due, [YOUNG_TABLE_ROWS]);
      if (due) await this.db.query(this.sql.analyze);
      return due;
    })().finally(() => (this.running = undefined));
    return this.running;
  }
}
