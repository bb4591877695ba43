import { createHash } from 'node:crypto';
import type { ChaosInput } from './chaos.workflows';
import type { FaultKind, PhaseSpec, Profile } from './profiles';
import { Prng } from './prng';

/**
 * A phase's schedule, drawn from the seed before anything runs: the runs, every delivery (each signal
 * and message at least twice, from different senders, in shuffled order) and every fault decision.
 * Times are ms from the phase's start. Nothing here depends on what happens at run time.
 */
export type SignalMode = 'early' | 'normal' | 'late' | 'none';

export interface PlannedDelivery {
  at: number;
  sender: number;
  kind: 'signal' | 'message';
  key: string;
  payload: Record<string, unknown>;
}

export interface PlannedRun {
  id: string;
  at: number;
  input: ChaosInput;
  signalMode: SignalMode;
  /** Data message keys; the closing message 'close' comes after them all. */
  messages: string[];
  deliveries: PlannedDelivery[];
}

export type PlannedFault =
  | { kind: 'kill'; at: number; worker: number; inWindow: boolean; restartAfterMs: number }
  | { kind: 'pause'; at: number; worker: number; inWindow: boolean; durationMs: number }
  | { kind: 'connections'; at: number; times: number; spacingMs: number; listenDownMs: number }
  | { kind: 'restart'; at: number; downMs: number };

export interface PhasePlan {
  index: number;
  name: string;
  seconds: number;
  runs: PlannedRun[];
  faults: PlannedFault[];
  fingerprint: string;
}

/** When a run's signal copies go out (ms after its start): before its wait, during it, after a short deadline, or never. */
const SIGNAL_WINDOW: Record<SignalMode, [number, number] | undefined> = {
  early: [0, 300],
  normal: [1_000, 6_000],
  late: [9_000, 12_000],
  none: undefined,
};

/** How long a killed worker is planned to be away (restart delay plus a boot), so faults do not pile on one worker. */
const BOOT_ALLOWANCE_MS = 12_000;

export function planPhase(seed: number, index: number, spec: PhaseSpec, profile: Profile): PhasePlan {
  const runs = planRuns(Prng.derive(seed, `runs:${index}`), seed, index, spec, profile);
  const faults = planFaults(Prng.derive(seed, `faults:${index}`), spec, profile);
  const fingerprint = createHash('sha256').update(JSON.stringify({ runs, faults })).digest('hex').slice(0, 12);
  return { index, name: spec.name, seconds: spec.seconds, runs, faults, fingerprint };
}

function planRuns(prng: Prng, seed: number, index: number, spec: PhaseSpec, profile: Profile): PlannedRun[] {
  const runs: PlannedRun[] = [];
  const { inlineWaitMs } = profile.engine;
  // Runs start until 3 s before the phase ends, so their deliveries mostly land inside it.
  for (let at = prng.int(0, 500), k = 1; at < spec.seconds * 1000 - 3_000; at += prng.int(...profile.startEveryMs), k++) {
    const signalMode = prng.pick<SignalMode>(['early', 'normal', 'normal', 'normal', 'late', 'none']);
    const input: ChaosInput = {
      napMs: prng.int(inlineWaitMs + 300, inlineWaitMs + 1_500),
      // A long deadline where a signal is meant to win; a short one (it parks, then wakes itself) otherwise.
      signalTimeoutMs: signalMode === 'late' || signalMode === 'none' ? prng.int(1_000, 2_500) : 30_000,
    };
    const messages = Array.from({ length: prng.int(2, 4) }, (_, i) => `m${i + 1}`);
    const deliveries: PlannedDelivery[] = [];
    const copies = (kind: PlannedDelivery['kind'], key: string, from: number, to: number, payload: Record<string, unknown>) => {
      const first = prng.int(0, profile.senders - 1);
      const n = prng.int(2, 3);
      // Copies go out from different senders at independent moments, so they race and interleave.
      for (let c = 0; c < n; c++) {
        const sender = (first + c) % profile.senders;
        deliveries.push({ at: prng.int(from, to), sender, kind, key, payload: { ...payload, by: `sender-${sender}`, copy: c + 1 } });
      }
    };
    const window = SIGNAL_WINDOW[signalMode];
    if (window) copies('signal', 'approval', window[0], window[1], {});
    let last = 0;
    for (const [n, key] of messages.entries()) {
      const from = prng.int(0, 3_000);
      copies('message', key, from, from + prng.int(0, 2_000), { n: n + 1 });
    }
    for (const d of deliveries) if (d.kind === 'message') last = Math.max(last, d.at);
    const closeAt = last + prng.int(200, 1_500);
    copies('message', 'close', closeAt, closeAt + prng.int(0, 800), { n: 0, close: true });
    deliveries.sort((a, b) => a.at - b.at);
    runs.push({ id: `s${seed}-p${index}-r${k}`, at, input, signalMode, messages, deliveries });
  }
  return runs;
}


function planFaults(prng: Prng, spec: PhaseSpec, profile: Profile): PlannedFault[] {
  const faults: PlannedFault[] = [];
  const busyUntil = new Array<number>(profile.workers).fill(0);
  let serverBusyUntil = 0;
  const endMs = spec.seconds * 1000;
  const count = prng.int(...spec.count);
  const mixed = spec.faults.length > 1;
  let at = prng.int(1_500, 3_000);
  for (let i = 0; i < count && at < endMs - 4_000; i++) {
    const kind: FaultKind = prng.pick(spec.faults);
    // A fault on one worker needs it up, and leaves at least one other worker untouched.
    const free = busyUntil.map((until, w) => (until <= at ? w : -1)).filter((w) => w >= 0);
    const workerFault = kind === 'kill' || kind === 'pause';
    if (workerFault && free.length < 2) {
      at += prng.int(1_000, 2_000);
      continue;
    }
    if (kind === 'restart' && at < serverBusyUntil) {
      at += prng.int(1_000, 2_000);
      continue;
    }
    const worker = workerFault ? prng.pick(free) : -1;
    let busyFor = 0;
    switch (kind) {
      case 'kill': {
        const restartAfterMs = prng.int(300, 2_000);
        faults.push({ kind, at, worker, inWindow: prng.chance(0.6), restartAfterMs });
        busyFor = restartAfterMs + BOOT_ALLOWANCE_MS;
        break;
      }
      case 'pause': {
        const durationMs = 2 * profile.engine.leaseMs + prng.int(500, 2_500);
        faults.push({ kind, at, worker, inWindow: prng.chance(0.7), durationMs });
        busyFor = durationMs + 1_000;
        break;
      }
      case 'connections':
        faults.push({ kind, at, times: prng.int(3, 6), spacingMs: prng.int(150, 700), listenDownMs: prng.int(3_000, 6_000) });
        busyFor = 7_000;
        break;
      case 'restart':
        faults.push({ kind, at, downMs: prng.int(300, 1_500) });
        busyFor = 5_000;
        serverBusyUntil = at + busyFor;
        break;
    }
    if (workerFault) busyUntil[worker] = at + busyFor;
    // Alone, faults follow one another; mixed, the next may strike while this one lasts.
    at += mixed ? prng.int(1_500, 5_000) : (workerFault ? Math.min(busyFor, 6_000) : busyFor) + prng.int(1_000, 3_000);
  }
  return faults;
}
