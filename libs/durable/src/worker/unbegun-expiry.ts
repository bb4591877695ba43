import { Inject, Injectable, Logger } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import { sweepBatchOf, type ResolvedDurableOptions } from '../durable-options';
import { RunEndRepository } from '../persistence/run-end.repository';
import { DurableTelemetry } from '../observability/durable-telemetry';
import { DurableWorker } from './durable.worker';

/**
 * Fails the runs whose deadline passed before they began (expireUnbegunSql: in a queue, for a worker,
 * for a delayed start), a batch at a time until none is left: on each sweep, and in
 * DurableTestingModule's drain. It needs no free slot, so a saturated instance does it too.
 */
@Injectable()
export class UnbegunExpiry {
  private readonly logger = new Logger('DurableDeadlines');

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly ends: RunEndRepository,
    private readonly telemetry: DurableTelemetry,
    private readonly worker: DurableWorker,
  ) {}

  /** One pass; answers how many runs it failed. `stop` ends it between batches (a shutdown). */
  async run(stop: () => boolean = () => false): Promise<number> {
    const batchSize = sweepBatchOf(this.options);
    let failed = 0;
    for (;;) {
      const workflows = await this.ends.expireUnbegun(batchSize, this.worker.id);
      this.telemetry.ended('failed', workflows);
      failed += workflows.length;
      if (workflows.length < batchSize || stop()) break;
    }
    if (failed) this.logger.warn(`Failed ${failed} run(s) whose deadline passed before they began.`);
    return failed;
  }
}
