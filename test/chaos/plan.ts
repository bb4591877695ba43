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
  /** A signal sent with `{ manager }` inside an application transaction that writes a business row, then commits or rolls back on purpose. */
  tx?: 'commit' | 'rollback';
}

export interface PlannedRun {
  id: string;
  at: number;
  input: ChaosInput;
  signalMode: SignalMode;
  /** Data message keys; the closing message 'close' comes after them all. */
  messages: string[];
  deliveries: PlannedDelivery[];
  /** 'tx': started with `{ manager }` inside an application transaction that writes a business row and commits. */
  startVia: 'client' | 'tx';
  /** Started in the orders queue (CHAOS_ORDER_QUEUE), with the rest of its burst. */
  queued?: true;
  /** What the operator does to it (the actions themselves are in the phase's `actions`). */
  role: RunRole;
}

/** plain: left alone (or caught in a bulk action); the others get that operator action. */
export type RunRole = 'plain' | 'cancel' | 'resume' | 'retry';

/**
 * An operator action, by WorkflowClient or the REST API of a sender, on one run or (bulk) on several.
 * `at` is ms from the phase's start; a retry is repeated until the run has failed and the retry is taken.
 */
export interface PlannedAction {
  at: number;
  sender: number;
  op: 'cancel' | 'resume' | 'retry';
  via: 'client' | 'rest' | 'bulk';
  runIds: string[];
}

/** A start made with `{ manager }` in an application transaction that is rolled back on purpose: neither the business row nor the run may exist. */
export interface PlannedRollback {
  id: string;
  at: number;
  sender: number;
}

/**
 * A kill or stop with `inWindow` is cued: it strikes the first worker to announce a step's effect
 * (while another worker stays up), inside that step's crash window; without, or when no effect comes
 * in time, it strikes `worker` at once (faults/fault.ts `cue`).
 */
export type PlannedFault =
  | { kind: 'kill'; at: number; worker: number; inWindow: boolean; restartAfterMs: number }
  | { kind: 'pause'; at: number; worker: number; inWindow: boolean; durationMs: number }
  | { kind: 'connections'; at: number; times: number; spacingMs: number; listenDownMs: number; targets: ConnectionTargets }
  | { kind: 'restart'; at: number; downMs: number };

/** Whose sessions a connection fault cuts: the workers' (with every LISTEN session), the senders', or both. */
export type ConnectionTargets = 'workers' | 'senders' | 'both';

export interface PhasePlan {
  index: number;
  name: string;
  seconds: number;
  runs: PlannedRun[];
  actions: PlannedAction[];
  rollbacks: PlannedRollback[];
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
  const { actions, rollbacks } = planOperations(Prng.derive(seed, `operations:${index}`), runs, seed, index, spec, profile);
  const faults = planFaults(Prng.derive(seed, `faults:${index}`), spec, profile);
  const fingerprint = createHash('sha256').update(JSON.stringify({ runs, actions, rollbacks, faults })).digest('hex').slice(0, 12);
  return { index, name: spec.name, seconds: spec.seconds, runs, actions, rollbacks, faults, fingerprint };
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
    runs.push({ id: `s${seed}-p${index}-r${k}`, at, input, signalMode, messages, deliveries, startVia: 'client', role: 'plain' });
  }
  burst(Prng.derive(seed, `bursts:${index}`), Prng.derive(seed, `queued-bursts:${index}`), runs);
  return runs;
}

/**
 * Some runs start in bursts of four at one instant, drawn from a generator of their own (a run's other
 * draws stay what they were for its seed): the first sender, which executes, commits the starts that
 * come while one is on the wire together (group commit), and the faults strike those batches too.
 * Half the bursts (`queuing`, another generator, so the bursts stay what they were) start in the
 * orders queue, whose batch takes the queue's slots for its starts and leaves the rest pending.
 */
function burst(prng: Prng, queuing: Prng, runs: PlannedRun[]): void {
  for (let i = 0; i + 3 < runs.length; i++) {
    if (!prng.chance(0.2)) continue;
    const together = runs.slice(i, i + 4);
    for (const run of together) run.at = runs[i].at;
    if (queuing.chance(0.5)) for (const run of together) run.queued = true;
    i += 3;
  }
}

/**
 * The application's and the operator's part, drawn from a generator of its own (the runs of a seed
 * stay as they were): which runs start and get signals inside application transactions
 * (some rolled back on purpose), and which are cancelled, resumed or failed-then-retried, one by one
 * through WorkflowClient or the REST API, or together in bulk.
 */
function planOperations(prng: Prng, runs: PlannedRun[], seed: number, index: number, spec: PhaseSpec, profile: Profile) {
  const actions: PlannedAction[] = [];
  const sender = () => prng.int(0, profile.senders - 1);
  for (const run of runs) {
    // Not a run of a queued burst: a start in an application transaction is never batched, and those
    // bursts are what proves queued starts batched in slots they took (seed 990558138 drew seven of its twelve so).
    if (prng.chance(0.3) && !run.queued) run.startVia = 'tx';
    for (const d of run.deliveries) if (d.kind === 'signal' && prng.chance(0.35)) d.tx = 'commit';
    if (prng.chance(0.25)) {
      // A rolled-back copy says so in its payload: the checker must never find it stored or used.
      const [from, to] = SIGNAL_WINDOW[run.signalMode] ?? [1_000, 6_000];
      const by = sender();
      run.deliveries.push({
        at: prng.int(from, to),
        sender: by,
        kind: 'signal',
        key: 'approval',
        payload: { by: `rollback-sender-${by}`, copy: 0 },
        tx: 'rollback',
      });
      run.deliveries.sort((a, b) => a.at - b.at);
    }
    run.role = prng.pick<RunRole>(['plain', 'plain', 'plain', 'plain', 'plain', 'cancel', 'resume', 'retry']);
    const via = () => prng.pick(['client', 'rest'] as const);
    switch (run.role) {
      case 'cancel': // half around its child's short life (before the spawn, or while the child runs), half later, up to its channel loop
        actions.push({
          at: run.at + (prng.chance(0.5) ? prng.int(300, 1_500) : prng.int(1_500, 9_000)),
          sender: sender(),
          op: 'cancel',
          via: via(),
          runIds: [run.id],
        });
        break;
      case 'resume': // mostly during its nap or its signal wait
        actions.push({ at: run.at + prng.int(1_500, 7_000), sender: sender(), op: 'resume', via: via(), runIds: [run.id] });
        break;
      case 'retry': // its gate step fails it at once; the retry is repeated until the run has failed
        run.input.gate = true;
        actions.push({ at: run.at + prng.int(1_500, 3_000), sender: sender(), op: 'retry', via: via(), runIds: [run.id] });
        break;
    }
  }
  // One bulk cancel and one bulk resume a phase, over plain runs already started.
  const plain = prng.shuffle(runs.filter((r) => r.role === 'plain'));
  for (const [op, n] of [
    ['cancel', 2],
    ['resume', 3],
  ] as const) {
    const group = plain.splice(0, n);
    if (!group.length) continue;
    actions.push({
      at: Math.max(...group.map((r) => r.at)) + prng.int(1_500, 6_000),
      sender: sender(),
      op,
      via: 'bulk',
      runIds: group.map((r) => r.id),
    });
  }
  actions.sort((a, b) => a.at - b.at);
  const rollbacks: PlannedRollback[] = Array.from({ length: prng.int(1, 2) }, (_, k) => ({
    id: `s${seed}-p${index}-rollback${k + 1}`,
    at: prng.int(0, spec.seconds * 1000 - 3_000),
    sender: sender(),
  }));
  return { actions, rollbacks };
}

function planFaults(prng: Prng, spec: PhaseSpec, profile: Profile): PlannedFault[] {
  const faults: PlannedFault[] = [];
  const busyUntil = new Array<number>(profile.workers).fill(0);
  let serverBusyUntil = 0;
  const endMs = spec.seconds * 1000;
  const count = prng.int(...spec.count);
  const mixed = spec.faults.length > 1;
  let at = prng.int(1_500, 3_000);
  // A phase of one kind strikes at least its lowest count (the minimums rely on it), even late in the phase.
  const room = () => at < endMs - 4_000 || (!mixed && faults.length < spec.count[0] && at < endMs - 2_000);
  for (let i = 0; i < count && room(); i++) {
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
    // The first kill or stop of a phase of that kind alone is always cued inside a step's crash window.
    const firstAlone = !mixed && !faults.some((f) => f.kind === kind);
    let busyFor = 0;
    switch (kind) {
      case 'kill': {
        const restartAfterMs = prng.int(300, 2_000);
        faults.push({ kind, at, worker, inWindow: prng.chance(0.6) || firstAlone, restartAfterMs });
        busyFor = restartAfterMs + BOOT_ALLOWANCE_MS;
        break;
      }
      case 'pause': {
        const durationMs = 2 * profile.engine.leaseMs + prng.int(500, 2_500);
        faults.push({ kind, at, worker, inWindow: prng.chance(0.7) || firstAlone, durationMs });
        busyFor = durationMs + 1_000;
        break;
      }
      case 'connections':
        faults.push({
          kind,
          at,
          times: prng.int(3, 6),
          spacingMs: prng.int(150, 700),
          listenDownMs: prng.int(3_000, 6_000),
          targets: prng.pick<ConnectionTargets>(['workers', 'senders', 'both']),
        });
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
