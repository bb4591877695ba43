import type { Counter, Histogram, Registry } from 'prom-client';

type PromClient = typeof import('prom-client');

/** The figures an operator watches, as Prometheus metrics (the `metrics` option; prom-client is an optional peer). */
/** Buckets of the group-commit batch sizes (maxBatch is at most 1,000, 64 by default). */
const BATCH_SIZES = [1, 2, 4, 8, 16, 32, 64, 128];

export class Metrics {
  readonly started: Counter<'workflow'>;
  readonly ended: Counter<'workflow' | 'status'>;
  readonly stepDuration: Histogram<'workflow' | 'step' | 'outcome'>;
  readonly claimLatency: Histogram<string>;
  readonly leaseLosses: Counter<string>;
  readonly claimPassDuration: Histogram<'trigger'>;
  readonly listenReconnects: Counter<string>;
  readonly checkpointBatchSize: Histogram<string>;
  readonly startBatchSize: Histogram<string>;

  constructor(
    options: { registry?: unknown; prefix: string },
    gauges: () => Promise<{ waiting: Record<string, number>; overdue: number }>,
  ) {
    let client: PromClient;
    try {
      client = require('prom-client') as PromClient;
    } catch {
      throw new Error('The `metrics` option needs the package prom-client: npm install prom-client.');
    }
    const registry = (options.registry as Registry | undefined) ?? client.register;
    const p = options.prefix;
    const registers = [registry];
    this.started = new client.Counter({
      name: `${p}runs_started_total`,
      help: 'Runs started, by workflow.',
      labelNames: ['workflow'],
      registers,
    });
    this.ended = new client.Counter({
      name: `${p}runs_ended_total`,
      help: 'Runs that ended, by workflow and status (completed, failed).',
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
      help: 'How late runs were claimed after their wake time.',
      buckets: [0.005, 0.02, 0.05, 0.1, 0.5, 1, 5, 30],
      registers,
    });
    this.leaseLosses = new client.Counter({
      name: `${p}lease_losses_total`,
      help: 'Executions stopped because their lease was taken over or revoked.',
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
    let latest: { at: number; figures: Promise<Awaited<ReturnType<typeof gauges>> | null> } | undefined;
    const figures = () => {
      if (!latest || Date.now() - latest.at > 500) latest = { at: Date.now(), figures: gauges().catch(() => null) };
      return latest.figures;
    };
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
  }
}
