/**
 * The harness's profiles and command line. `ci` is sized to finish in under 4 minutes on a 2-core
 * machine; `soak` repeats the same cycle of phases for as many minutes as asked.
 */
export type FaultKind = 'kill' | 'pause' | 'connections' | 'restart';

/** The library options every chaos process gets: a short lease and a quick sweeper, so recovery is fast. */
export interface EngineOptions {
  leaseMs: number;
  sweepMs: number;
  inlineWaitMs: number;
  concurrency: number;
  /** The workers' retention: finished runs this old are deleted during the schedule (failed ones are kept for their retry). */
  retention: { completedMs: number; cancelledMs: number; intervalMs: number };
}

/** One stretch of the schedule: runs keep starting while these faults (alone or mixed) strike. */
export interface PhaseSpec {
  name: string;
  faults: FaultKind[];
  seconds: number;
  /** How many faults the phase plans. */
  count: [number, number];
}

export interface Profile {
  name: 'ci' | 'soak';
  workers: number;
  senders: number;
  engine: EngineOptions;
  /** One cycle; `soak` repeats it until `minutes` are spent. */
  cycle: PhaseSpec[];
  minutes?: number;
  /** Gap between two run starts, ms. */
  startEveryMs: [number, number];
  /** How long runs may take to finish after the last phase before the check calls them stuck. */
  drainSeconds: number;
}

export interface Options {
  profile: Profile;
  seed: number;
  /** Print the schedule of the first cycle and exit (shows that a seed fixes it). */
  planOnly: boolean;
  /** Keep the session's directory (logs, record, data) even when every promise held. */
  keep: boolean;
}

const ENGINE: EngineOptions = {
  leaseMs: 2_000,
  sweepMs: 250,
  inlineWaitMs: 300,
  concurrency: 10,
  // Short enough that a child finished while its parent is held up (a kill, a stop, an outage) is old enough to go.
  retention: { completedMs: 1_500, cancelledMs: 1_000, intervalMs: 500 },
};

const CYCLE: PhaseSpec[] = [
  { name: 'kill', faults: ['kill'], seconds: 22, count: [2, 3] },
  { name: 'pause', faults: ['pause'], seconds: 20, count: [1, 2] },
  { name: 'connections', faults: ['connections'], seconds: 16, count: [2, 3] },
  { name: 'restart', faults: ['restart'], seconds: 16, count: [1, 1] },
  { name: 'mixed', faults: ['kill', 'pause', 'connections', 'restart'], seconds: 36, count: [4, 6] },
];

export function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--'))
      throw new Error(`Unexpected argument "${arg}". Usage: npm run chaos -- --profile ci|soak [--minutes N] [--seed N] [--plan] [--keep]`);
    const [name, inline] = arg.slice(2).split('=', 2);
    if (name === 'plan' || name === 'keep') flags.set(name, 'true');
    else flags.set(name, inline ?? argv[++i] ?? '');
  }
  const name = flags.get('profile') ?? 'ci';
  if (name !== 'ci' && name !== 'soak') throw new Error(`--profile must be ci or soak; got "${name}".`);
  const minutes = flags.has('minutes') ? Number(flags.get('minutes')) : 20;
  if (!(minutes > 0 && minutes <= 24 * 60))
    throw new Error(`--minutes must be a number of minutes from 0 to 1440; got "${flags.get('minutes')}".`);
  const seedText = flags.get('seed');
  // Without --seed the seed comes from the clock: it is printed, and passing it back replays the schedule.
  const seed = seedText === undefined ? Date.now() % 2_147_483_647 : Number(seedText);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error(`--seed must be a whole number from 0 to ${0xffffffff}; got "${seedText}".`);
  const profile: Profile =
    name === 'ci'
      ? { name, workers: 3, senders: 2, engine: ENGINE, cycle: CYCLE, startEveryMs: [700, 1100], drainSeconds: 60 }
      : { name, workers: 3, senders: 2, engine: ENGINE, cycle: CYCLE, minutes, startEveryMs: [700, 1100], drainSeconds: 90 };
  return { profile, seed, planOnly: flags.has('plan'), keep: flags.has('keep') };
}
