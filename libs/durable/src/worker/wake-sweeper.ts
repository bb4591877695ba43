import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { DurableWorker } from './durable.worker';
import { SchedulePass } from './schedule-pass';

/**
 * The fallback that makes every wake certain: on an interval registered with @nestjs/schedule it
 * fires the due schedules, then claims due runs and runs whose lease lapsed. Its cost follows the due
 * schedules and runs (index ranges on next_fire_at and wake_at), not the number of waiting ones.
 */
@Injectable()
export class WakeSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly scheduler: SchedulerRegistry,
    private readonly worker: DurableWorker,
    private readonly schedules: SchedulePass,
  ) {}

  private readonly logger = new Logger('DurableSweeper');
  private firing?: Promise<void>;

  private get name(): string {
    return `nestjs-durable:sweeper:${this.options.schema}`;
  }

  onApplicationBootstrap(): void {
    if (!this.options.sweeper || !this.worker.enabled) return;
    const timer = setInterval(() => this.tick(), this.options.sweeper.intervalMs);
    timer.unref();
    this.scheduler.addInterval(this.name, timer);
  }

  /** One sweep: the schedule pass (one at a time here; a slow one is not stacked), then a claim pass. */
  private tick(): void {
    this.firing ??= this.schedules
      .run()
      .then(
        () => undefined,
        (error: Error) => this.logger.error(`The schedule pass failed; the next sweep tries again: ${error.stack ?? error}`),
      )
      .finally(() => (this.firing = undefined));
    void this.firing.then(() => this.worker.sweep());
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.scheduler.doesExist('interval', this.name)) this.scheduler.deleteInterval(this.name);
    await this.firing;
  }
}
