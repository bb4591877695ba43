import type { Counter, Histogram, Registry } from 'prom-client';
import { sharedProbe } from './shared-probe';

type PromClient = typeof import('prom-client');

/** Buckets of the group-commit batch sizes (maxBatch is at most 1,000, 64 by default). */
const BATCH_SIZES = [1, 2, 4, 8, 16, 32, 64, 128];
/**
 * How long a scrape waits for the gauges' query: a database that hangs (packets dropped, the pool
 * exhausted) would hold the whole scrape past Prometheus' timeout, this library's counters and the
 * application's own metrics with it.
 */
const GAUGE_WAIT_MS = 2_000;

type GaugeFigures = { waiting: Record<string, number>; overdue: number };

/** The figures an operator watches, as Prometheus metrics (the `metrics` option; prom-client is an optional peer). */
export class Metrics {
  readonly started: Counter<'workflow'>;
  readonly ended: Counter<'workflow' | 'status'>;
  readonly stepDuration: Histogram<'workflow' | 'step' | 'outcome'>;
  readonly claimLatency: Histogram<string>;
  readonly queueWait: Histogram<'queue'>;
  readonly leaseLosses: Counter<string>;
  readonly claimPassDuration: Histogram<'trigger'>;
  readonly listenReconnects: Counter<string>;
  readonly checkpointBatchSize: Histogram<string>;
  readonly startBatchSize: Histogram<string>;
  private readonly registry: Registry;
  /** The metrics this module registered. */
  private readonly names: string[];

  /** `abandonAfterMs`: how long an unanswered gauge query is waited on by later scrapes (the statement timeout). */
  constructor(options: { registry?: unknown; prefix: string; abandonAfterMs: number }, gauges: () => Promise<GaugeFigures>) {
    let client: PromClient;
    try {
      client = require('prom-client') as PromClient;
    } catch {
      throw new Error('The `metrics` option needs the package prom-client: npm install prom-client.');
    }
    this.registry = (options.registry as Registry | undefined) ?? client.register;
    const p = options.prefix;
    const taken = this.registry.getSingleMetric(`${p}runs_started_total`);
    if (taken)
      throw new Error(
        `The \`metrics\` option found ${p}runs_started_total already registered: another DurableModule in this process registers its metrics in the same registry. Give each module its own \`metrics.registry\` or \`metrics.prefix\`.`,
      );
    const registers = [this.registry];
    const before = new Set(this.registry.getMetricsAsArray().map((metric) => metric.name));
    this.started = new client.Counter({
      name: `${p}runs_started_total`,
      help: 'Runs started, by workflow.',
      labelNames: ['workflow'],
      registers,
    });
    this.ended = new client.Counter({
      name: `${p}runs_ended_total`,
      help: 'Runs that ended, by workflow and status (completed, failed, cancelled).',
      labelNames: ['workflow', 'status'],
      registers,
    });
    this.stepDuration = new client.Histogram({
      name: `${p}step_duration_seconds`,
      help: 'Duration of executed (not replayed) steps.',
      labelNames: ['workflow', 'step', 'outcome'],
      buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2, 10, 60],
      registers,
    });
    this.claimLatency = new client.Histogram({
      name: `${p}claim_latency_seconds`,
      help: "How late runs were claimed after their wake time (runs admitted from a queue's backlog: queue_wait_seconds).",
      buckets: [0.005, 0.02, 0.05, 0.1, 0.5, 1, 5, 30],
      registers,
    });
    this.queueWait = new client.Histogram({
      name: `${p}queue_wait_seconds`,
      help: "How long runs admitted from a queue's backlog waited there, from due to admission, by queue.",
      labelNames: ['queue'],
      buckets: [0.05, 0.5, 5, 30, 120, 600, 3600, 86400],
      registers,
    });
    this.leaseLosses = new client.Counter({
      name: `${p}lease_losses_total`,
      help: 'Executions stopped because another worker took their run over (their lease had lapsed); cancels are not counted.',
      registers,
    });
    this.claimPassDuration = new client.Histogram({
      name: `${p}claim_pass_duration_seconds`,
      help: "Duration of claim passes (the sweeper's among them).",
      labelNames: ['trigger'],
      buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2],
      registers,
    });
    this.listenReconnects = new client.Counter({
      name: `${p}listen_reconnects_total`,
      help: 'Times the LISTEN connection was re-established.',
      registers,
    });
    this.checkpointBatchSize = new client.Histogram({
      name: `${p}checkpoint_batch_size`,
      help: 'Checkpoints (timers among them) sent per statement and commit (group commit).',
      buckets: BATCH_SIZES,
      registers,
    });
    this.startBatchSize = new client.Histogram({
      name: `${p}start_batch_size`,
      help: 'Starts executed here sent per statement and commit (group commit).',
      buckets: BATCH_SIZES,
      registers,
    });
    // One query per scrape serves both gauges, whichever of them is collected first. When the database cannot
    // answer, the gauges say they do not know (no series, NaN) and the scrape goes on: one gauge failing would fail
    // the whole scrape, this library's counters and the application's own metrics with it, during the outage.
    const figures = sharedProbe(gauges, { waitMs: GAUGE_WAIT_MS, abandonAfterMs: options.abandonAfterMs, reuseMs: 500 });
    new client.Gauge({
      name: `${p}runs_waiting`,
      help: 'Waiting runs, by what they wait for (no series while the database cannot answer).',
      labelNames: ['reason'],
      registers,
      async collect() {
        this.reset();
        for (const [reason, count] of Object.entries((await figures())?.waiting ?? {})) this.set({ reason }, count);
      },
    });
    new client.Gauge({
      name: `${p}wakes_overdue`,
      help: 'Runs due for more than two sweep intervals and not picked up (NaN while the database cannot answer).',
      registers,
      async collect() {
        this.set((await figures())?.overdue ?? NaN);
      },
    });
    this.names = this.registry
      .getMetricsAsArray()
      .map((metric) => metric.name)
      .filter((name) => !before.has(name));
  }

  /** Takes this module's metrics out of the registry (at shutdown), so an application made again in this process registers them anew. */
  unregister(): void {
    for (const name of this.names) this.registry.removeSingleMetric(name);
  }
}
