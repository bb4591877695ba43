import { Inject, Injectable } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import type { RunView } from '../interfaces';
import { QueueRepository } from '../persistence/queue.repository';

/**
 * Says why a pending run of a queue does not execute yet: the reason (kind `queue`) is worked out
 * when runs are read, from the queue's running runs, partitions and rate window, never stored on the
 * row (admission would otherwise write to every run it passes over).
 */
@Injectable()
export class QueueReasons {
  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly queues: QueueRepository,
  ) {}

  /**
   * With `position` (a single run's read), each reason also gets the run's place in line: in its partition when
   * its queue limits partitions and it has one (`positionIn: 'partition'`), else in its queue.
   */
  async annotate<T extends RunView>(views: T[], { position = false } = {}): Promise<T[]> {
    const pending = views.filter((view) => view.status === 'pending' && view.queue !== undefined);
    if (!pending.length) return views;
    const reasons = await this.queues.reasons(
      this.options.queues,
      pending.map((view) => ({ id: view.runId, queue: view.queue!, partition_key: view.partitionKey ?? null })),
      new Map(pending.map((view) => [view.runId, view.updatedAt])),
    );
    for (const view of pending) {
      const reason = reasons.get(view.runId);
      if (reason?.kind === 'queue' && position) {
        const partitioned =
          (this.options.queues.get(reason.queue)?.partitionConcurrency ?? null) !== null && reason.partitionKey !== undefined;
        const place = await this.queues.position(view.runId, partitioned);
        if (place !== undefined) Object.assign(reason, { position: place, positionIn: partitioned ? 'partition' : 'queue' });
      }
      view.waiting = reason;
    }
    return views;
  }
}
