import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { DurableDatabase } from '../persistence/durable-database';
import { createJournalPartitionsSql } from '../persistence/journal-partitions';
import { scheduleInterval, stopInterval } from './scheduled-interval';

/** Every hour: a journal write needs its day's partition, so each instance keeps the days ahead made. */
const EVERY_HOUR = 3_600_000;

/**
 * Keeps the journal's day partitions made ahead of time, on every instance (a client-only one writes
 * history too): at boot (the database provider makes them before anything writes) and hourly after.
 */
@Injectable()
export class JournalPartitionsService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DurablePartitions');

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly scheduler: SchedulerRegistry,
    private readonly db: DurableDatabase,
  ) {}

  private get name(): string {
    return `nestjs-durable:partitions:${this.options.schema}`;
  }

  onApplicationBootstrap(): void {
    scheduleInterval(
      this.scheduler,
      this.name,
      EVERY_HOUR,
      () =>
        void this.db
          .query(createJournalPartitionsSql(this.db.tables))
          .catch((error) => this.logger.error(`Could not make the journal's partitions ahead: ${(error as Error).message}`)),
    );
  }

  beforeApplicationShutdown(): void {
    stopInterval(this.scheduler, this.name);
  }
}
