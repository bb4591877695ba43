import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { RunRepository } from '../persistence/run.repository';
import { probeAbandonMs } from './shared-probe';
import { Metrics } from './metrics';
import { Tracing } from './tracing';

/** Spans and metrics in one place, so the engine's code calls one thing at each point worth seeing. */
@Injectable()
export class DurableTelemetry implements OnApplicationShutdown {
  readonly tracing = new Tracing();
  /** Undefined unless the `metrics` option is set. */
  readonly metrics?: Metrics;

  constructor(@Inject(DURABLE_OPTIONS) options: ResolvedDurableOptions, runs: RunRepository) {
    if (options.metrics) {
      const sweepMs = options.sweeper ? options.sweeper.intervalMs : 1_000;
      // The server ends a gauge query by the statement timeout; one unanswered past it (a minute without one) was lost.
      const abandonAfterMs = probeAbandonMs(options.statementTimeoutMs);
      const metrics = new Metrics({ ...options.metrics, abandonAfterMs }, () => runs.waitingFigures(2 * sweepMs));
      runs.observeStartBatches = (size) => metrics.startBatchSize.observe(size);
      this.metrics = metrics;
    }
  }

  onApplicationShutdown(): void {
    this.metrics?.unregister();
  }

  /** Counts runs started outside the run starter (a schedule's slots, triggers and backfills, forks): one workflow name per run. */
  started(workflows: readonly string[]): void {
    if (this.metrics) countBy(workflows, (workflow, n) => this.metrics!.started.inc({ workflow }, n));
  }

  /** Counts runs ended outside an execution (runs_ended_total): by a cancel, or failed by the sweeper. One workflow name per run. */
  ended(status: 'cancelled' | 'failed', workflows: readonly string[]): void {
    if (this.metrics) countBy(workflows, (workflow, n) => this.metrics!.ended.inc({ workflow, status }, n));
  }
}

/** Calls `inc` once per distinct workflow, with its count. */
function countBy(workflows: readonly string[], inc: (workflow: string, n: number) => void): void {
  const counts = new Map<string, number>();
  for (const workflow of workflows) counts.set(workflow, (counts.get(workflow) ?? 0) + 1);
  for (const [workflow, n] of counts) inc(workflow, n);
}
