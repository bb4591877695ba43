/** Sizes and repetitions of one run: the full run, or the quick smoke (same code paths, smaller numbers). */
export interface Plan {
  quick: boolean;
  /** Measured repetitions of each figure (after one warm-up that is thrown away). */
  reps: number;
  throughputReps: number;
  throughputMs: number;
  warmupMs: number;
  concurrencies: number[];
  /** Worker concurrency of ours, and the pool size given to every system. */
  workerConcurrency: number;
  latencySamples: number;
  /** How long the latency section's process runs workflows one at a time before its warm figure. */
  latencyWarmMs: number;
  signalSamples: number;
  sleepRuns: number;
  inlineSleepMs: number;
  parkedSleepMs: number;
  parkedInlineWaitMs: number;
  statementRuns: number;
  fanOutChildren: number;
  /** Runs the memory figure's worker starts, parks and wakes itself. */
  parkedRuns: number;
  waitingRows: number;
  simultaneousWakes: number;
  /** Worker concurrency of each of the two draining instances (two times this plus spares stays under max_connections = 100). */
  drainConcurrency: number;
  /** Per-minute schedules, all due at one minute boundary: the schedules section. */
  schedules: number;
  /** Finished runs of one day whose journal the retention section drops. */
  retentionRuns: number;
}

export function planFor(quick: boolean): Plan {
  const common = {
    concurrencies: [1, 8, 64],
    workerConcurrency: 64,
    inlineSleepMs: 200,
    parkedSleepMs: 2_000,
    parkedInlineWaitMs: 500,
    drainConcurrency: 32,
  };
  return quick
    ? {
        ...common,
        quick,
        reps: 2,
        throughputReps: 2,
        throughputMs: 700,
        warmupMs: 300,
        latencySamples: 60,
        latencyWarmMs: 1_000,
        signalSamples: 15,
        sleepRuns: 8,
        statementRuns: 100,
        fanOutChildren: 100,
        parkedRuns: 2_000,
        waitingRows: 10_000,
        simultaneousWakes: 2_000,
        schedules: 1_000,
        retentionRuns: 20_000,
      }
    : {
        ...common,
        quick,
        reps: 3,
        throughputReps: 5,
        throughputMs: 4_000,
        warmupMs: 1_500,
        latencySamples: 300,
        latencyWarmMs: 5_000,
        signalSamples: 60,
        sleepRuns: 25,
        statementRuns: 500,
        fanOutChildren: 100,
        parkedRuns: 20_000,
        waitingRows: 1_000_000,
        simultaneousWakes: 10_000,
        schedules: 10_000,
        retentionRuns: 1_000_000,
      };
}
