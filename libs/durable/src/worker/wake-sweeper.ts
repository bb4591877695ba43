import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { DurableWorker } from './durable.worker';

/**
 * The fallback that makes every wake certain: on an interval registered with @nestjs/schedule it
 * claims due runs and runs whose lease lapsed. Its cost follows the due runs (an index range on
 * wake_at), not the number of waiting runs.
 */
@Injectable()
export class WakeSweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly scheduler: SchedulerRegistry,
    private readonly worker: DurableWorker,
  ) {}

  private get name(): string {
    return `nestjs-durable:sweeper:${this.options.schema}`;
  }

  onApplicationBootstrap(): void {
    if (!this.options.sweeper || !this.worker.enabled) return;
    const timer = setInterval(() => this.worker.sweep(), this.options.sweeper.intervalMs);
    timer.unref();
    this.scheduler.addInterval(this.name, timer);
  }

  beforeApplicationShutdown(): void {
    if (this.scheduler.doesExist('interval', this.name)) this.scheduler.deleteInterval(this.name);
  }
}
