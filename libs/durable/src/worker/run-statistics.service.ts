import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { DurableDatabase } from '../persistence/durable-database';
import { analyzeRunsIfDueSql, YOUNG_TABLE_ROWS } from '../persistence/runs-statistics';
import { scheduleInterval, stopInterval } from './scheduled-interval';

/** How often a worker instance looks at the runs table's statistics: a read of two counters. */
const EVERY_SECOND = 1_000;

/**
 * After an analysis, or a look that failed, the looks pause this long: an analysis skipped because
 * another session holds the table (a vacuum, an index built concurrently) logs a warning in the
 * server's log, and a database that is down answers nothing anyway.
 */
const PAUSE_MS = 10_000;

/**
 * Gathers the runs table's planner statistics while the table is young. The library's statements
 * are prepared, and Postgres keeps a prepared statement's plan until the statistics of a table it
 * reads change: a plan made for a few hundred runs (a hashed sequential scan of runs, an index chosen
 * on a tie) would be kept for a million. Autovacuum gathers them once a twentieth of the table has
 * changed (the operations migration), but only at its next pass, a minute apart by default, while a
 * young table grows many times over in a minute. Due when the table has changed by as many rows as
 * it held at the last analysis (analyze_runs_if_due): while it grows faster than autovacuum looks;
 * after that, autovacuum's analyses come first. Each analysis makes every session plan its statements
 * again for the table as it is.
 */
@Injectable()
export class RunStatisticsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DurableStatistics');
  private readonly sql;
  private running?: Promise<boolean>;
  private failing = false;
  private pausedUntil = 0;

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly scheduler: SchedulerRegistry,
    private readonly db: DurableDatabase,
  ) {
    this.sql = analyzeRunsIfDueSql(db.tables);
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

  /** One look, unless paused; a failure is logged once until a look succeeds again. */
  private async tick(): Promise<void> {
    if (Date.now() < this.pausedUntil) return;
    try {
      if (await this.refresh()) this.pausedUntil = Date.now() + PAUSE_MS;
      this.failing = false;
    } catch (error) {
      this.pausedUntil = Date.now() + PAUSE_MS;
      if (!this.failing) this.logger.warn(`Could not look at the runs table's statistics: ${(error as Error).message}`);
      this.failing = true;
    }
  }

  /** Gathers the statistics when they are due; true when it did. One at a time per instance. */
  refresh(): Promise<boolean> {
    this.running ??= this.db
      .query<{ analyzed: boolean }>(this.sql, [YOUNG_TABLE_ROWS])
      .then(([{ analyzed }]) => analyzed)
      .finally(() => (this.running = undefined));
    return this.running;
  }
}
