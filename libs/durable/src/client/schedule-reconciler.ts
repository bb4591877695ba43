import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { ScheduleRepository } from '../persistence/schedule.repository';
import { DbClock } from '../runtime/db-clock';
import { WorkflowRegistry } from '../runtime/workflow.registry';
import { DurableWorker } from '../worker/durable.worker';
import { WakeSweeper } from '../worker/wake-sweeper';

/**
 * At boot, reconciles the schedules declared on @Workflow classes (checked by the explorer at module
 * init, so a mistake fails the boot before anything is written) with the schedules table.
 */
@Injectable()
export class ScheduleReconciler implements OnApplicationBootstrap {
  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly registry: WorkflowRegistry,
    private readonly schedules: ScheduleRepository,
    private readonly clock: DbClock,
    private readonly sweeper: WakeSweeper,
    private readonly worker: DurableWorker,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // The heartbeat naming what this instance executes goes first (a failed write is only logged): another
    // instance deciding workflowMissing (its sweeper does, once a lease) must not flag a schedule this boot
    // creates before it sees that heartbeat.
    if (this.worker.enabled) await this.worker.renew();
    const specs = this.registry.all().flatMap((workflow) => workflow.schedules);
    // The workflows whose schedules this instance fires: none without a worker (one that only starts runs and
    // serves the dashboard) or without a sweeper.
    const fires = this.worker.enabled && this.options.sweeper ? this.registry.names() : [];
    await this.schedules.reconcile(specs, fires, this.clock.shiftMs, this.options.leaseMs);
    this.sweeper.soon();
  }
}
