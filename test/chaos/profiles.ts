import { BREAKS, BreakName, isBreak } from './breaks';

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
  /** What each cycle of phases must at least have done, or the session proves nothing and fails (checks/minimums.ts). */
  minimums: Minimums;
}

/**
 * The least a cycle of phases must do for its verdict to mean something: faults struck, by kind;
 * kills that struck inside a step (between its effect and its checkpoint); lease takeovers; deliveries
 * made while a fault was on; timers, children and channel messages checked. A session below any of
 * them fails, whatever the other checks say. `soak` multiplies them by the cycles it ran.
 */
export interface Minimums {
  kill: number;
  pause: number;
  connections: number;
  restart: number;
  killsInStep: number;
  takeovers: number;
  deliveriesDuringFaults: number;
  timers: number;
  children: number;
  messagesHandled: number;
  /** Checkpoints committed in one transaction with others (group commit). */
  batchedCheckpoints: number;
  /** Runs whose start was committed in one transaction with others' (group commit of starts). */
  batchedStarts: number;
  /** Of those, runs that took a slot of the orders queue at their start (group commit of queued starts). */
  batchedQueuedStarts: number;
  /** Kills that struck while a group-commit batch of the worker ran on the server (it never saw the answer). */
  killsInBatch: number;
  /** Sessions a connection burst cut while they ran a group-commit batch (the batch is tried again whole). */
  cutsInBatch: number;
}

export interface Options {
  profile: Profile;
  seed: number;
  /** Print the schedule of the first cycle and exit (shows that a seed fixes it). */
  planOnly: boolean;
  /** Keep the session's directory (logs, record, data) even when every promise held. */
  keep: boolean;
  /** A kept session's directory: run the checker again over its evidence, and nothing else. */
  recheck?: string;
  /** Run only this many phases (a short session: it falls short of the minimums, so it fails). */
  phases?: number;
  /** Break one guarantee of the library on purpose (breaks.ts): the session must fail. */
  break?: BreakName;
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

/**
 * Per cycle. Whatever the seed, the single-kind phases plan at least 2 kills, 1 stop, 2 connection
 * bursts and 1 restart, and cue their first kill and first stop inside a step (plan.ts), which then
 * strike the first worker to enter a crash window: a run to take over. The other figures are about
 * half of what a cycle of `ci` measures (about 105 runs), so a cycle that ran short or checked little fails.
 */
const MINIMUMS: Minimums = {
  kill: 2,
  pause: 1,
  connections: 2,
  restart: 1,
  killsInStep: 1,
  takeovers: 1,
  deliveriesDuringFaults: 60,
  timers: 120,
  children: 60,
  messagesHandled: 150,
  batchedCheckpoints: 20,
  batchedStarts: 4,
  batchedQueuedStarts: 2,
  killsInBatch: 0,
  cutsInBatch: 0,
};

/** A profile by name (`soak` lasts `minutes`). */
export function profileNamed(name: Profile['name'], minutes = 20): Profile {
  return name === 'ci'
    ? { name, workers: 3, senders: 2, engine: ENGINE, cycle: CYCLE, startEveryMs: [700, 1100], drainSeconds: 60, minimums: MINIMUMS }
    : {
        name,
        workers: 3,
        senders: 2,
        engine: ENGINE,
        cycle: CYCLE,
        minutes,
        startEveryMs: [700, 1100],
        drainSeconds: 90,
        minimums: MINIMUMS,
      };
}

export function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--'))
      throw new Error(
        `Unexpected argument "${arg}". Usage: npm run chaos -- --profile ci|soak [--minutes N] [--seed N] [--phases N] [--break NAME] [--plan] [--keep] | --recheck <dir>`,
      );
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
  const recheck = flags.get('recheck');
  if (recheck === '') throw new Error('--recheck needs the directory of a kept session (it holds evidence.json).');
  const phases = flags.has('phases') ? Number(flags.get('phases')) : undefined;
  if (phases !== undefined && !(Number.isInteger(phases) && phases > 0))
    throw new Error(`--phases must be a whole number of phases, at least 1; got "${flags.get('phases')}".`);
  const broken = flags.get('break');
  if (broken !== undefined && !isBreak(broken))
    throw new Error(`--break must be one of ${Object.keys(BREAKS).join(', ')}; got "${broken}".`);
  return {
    profile: profileNamed(name, minutes),
    seed,
    planOnly: flags.has('plan'),
    keep: flags.has('keep'),
    recheck,
    phases,
    break: broken,
  };
}
