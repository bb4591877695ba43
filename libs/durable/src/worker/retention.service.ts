import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { RetentionAges, RetentionRepository } from '../persistence/retention.repository';
import { scheduleInterval, stopInterval } from './scheduled-interval';

/** The scheduled cleanup of finished runs (the `retention` option), on an interval of @nestjs/schedule. */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DurableRetention');
  private running?: Promise<number>;
  /** Shutdown began: a cleanup ends after its batch in flight (the rest waits for the next instance's pass). */
  private stopping = false;

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly scheduler: SchedulerRegistry,
    private readonly retention: RetentionRepository,
  ) {}

  private get name(): string {
    return `nestjs-durable:retention:${this.options.schema}`;
  }

  onApplicationBootstrap(): void {
    if (!this.options.retention || !this.options.worker.enabled) return;
    scheduleInterval(
      this.scheduler,
      this.name,
      this.options.retention.intervalMs,
      () => void this.cleanup().catch((error) => this.logger.warn(`Cleanup failed: ${(error as Error).message}`)),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    stopInterval(this.scheduler, this.name);
    await this.running?.catch(() => undefined);
  }

  /**
   * Deletes every finished run past its age, batch by batch, then drops the journal of the days left
   * without runs; returns how many runs it deleted (0 when another instance is at it).
   */
  cleanup(): Promise<number> {
    const retention = this.options.retention;
    if (!retention) return Promise.resolve(0);
    this.running ??= (async () => {
      let total = 0;
      for (;;) {
        const batch = await this.retention.deleteBatch(retention);
        if (batch === null) return total;
        total += batch.deleted;
        // A backlog of millions of runs (retention just turned on) would otherwise hold the shutdown for as long.
        if (this.stopping) return total;
        if (batch.picked < retention.batchSize) break;
      }
      await this.deleteSkips(retention);
      if (this.stopping) return total; // the drop's detaches each wait for older transactions: the next pass's
      const days = await this.retention.dropEmptiedDays();
      if (days?.length) this.logger.log(`Dropped the journal of the runs of ${days.join(', ')}: none of them is left.`);
      return total;
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Deletes the schedules' skipped slots older than the longest age kept: they are the history of runs not started. */
  private async deleteSkips(retention: RetentionAges): Promise<void> {
    const age = Math.max(...[retention.completed, retention.failed, retention.cancelled].filter((a) => a !== undefined));
    while (!this.stopping) {
      if (!(await this.retention.deleteSkips(age, retention.batchSize))) return;
    }
  }
}
