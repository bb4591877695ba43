import { Inject, Injectable, Logger } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import { sweepBatchOf, type ResolvedDurableOptions } from '../durable-options';
import { RunEndRepository } from '../persistence/run-end.repository';
import { DurableTelemetry } from '../observability/durable-telemetry';
import { WorkflowRegistry } from '../runtime/workflow.registry';
import { DurableWorker } from './durable.worker';

/**
 * Fails the runs a deadline ended that no execution holds, a batch at a time until none is left: on each
 * sweep, and in DurableTestingModule's drain. Those whose deadline passed before they began (expireUnbegunSql:
 * in a queue, for a worker, for a delayed start), and those that began and waited pending, for a slot of their
 * queue or for a worker, while the grace after their deadline ended (expirePendingPastGraceSql: of the workflows
 * this instance registers, whose grace it knows). It needs no free slot, so a saturated instance does it too.
 */
@Injectable()
export class DeadlineExpiry {
  private readonly logger = new Logger('DurableDeadlines');

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly ends: RunEndRepository,
    private readonly telemetry: DurableTelemetry,
    private readonly worker: DurableWorker,
    private readonly registry: WorkflowRegistry,
  ) {}

  /** One pass; answers how many runs it failed. `stop` ends it between batches (a shutdown). */
  async run(stop: () => boolean = () => false): Promise<number> {
    const graces = this.registry.all().map((w) => ({ workflow: w.name, grace_ms: w.deadlineGraceMs }));
    const unbegun = await this.inBatches(stop, (limit) => this.ends.expireUnbegun(limit, this.worker.id));
    const graceEnded = graces.length
      ? await this.inBatches(stop, (limit) => this.ends.expirePendingPastGrace(graces, limit, this.worker.id))
      : 0;
    if (unbegun) this.logger.warn(`Failed ${unbegun} run(s) whose deadline passed before they began.`);
    if (graceEnded)
      this.logger.warn(`Failed ${graceEnded} run(s) whose grace after their deadline ended while they waited for a slot or a worker.`);
    return unbegun + graceEnded;
  }

  /** Runs `expire` a batch at a time until a batch comes back short or `stop` says so; answers how many it failed. */
  private async inBatches(stop: () => boolean, expire: (limit: number) => Promise<string[]>): Promise<number> {
    const batchSize = sweepBatchOf(this.options);
    let failed = 0;
    for (;;) {
      const workflows = await expire(batchSize);
      this.telemetry.ended('failed', workflows);
      failed += workflows.length;
      if (workflows.length < batchSize || stop()) return failed;
    }
  }
}
