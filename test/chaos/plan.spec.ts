import { planPhase } from './plan';
import { parseOptions } from './profiles';
import { Prng } from './prng';

const { profile } = parseOptions(['--profile', 'ci', '--seed', '1']);
const cycle = (seed: number) => profile.cycle.map((spec, index) => planPhase(seed, index, spec, profile));

describe('chaos schedule', () => {
  it('a seed fixes the whole schedule: runs, deliveries and fault decisions', () => {
    expect(cycle(42)).toEqual(cycle(42));
    expect(cycle(42).map((p) => p.fingerprint)).not.toEqual(cycle(43).map((p) => p.fingerprint));
  });

  it('every signal and message goes out at least twice, from more than one sender, the close after every data message', () => {
    for (const run of cycle(7).flatMap((p) => p.runs)) {
      const byKey = new Map<string, number[]>();
      // A copy rolled back on purpose is not a delivery: the others must make it on their own.
      for (const d of run.deliveries.filter((d) => d.tx !== 'rollback')) byKey.set(d.key, [...(byKey.get(d.key) ?? []), d.sender]);
      for (const senders of byKey.values()) {
        expect(senders.length).toBeGreaterThanOrEqual(2);
        expect(new Set(senders).size).toBeGreaterThan(1);
      }
      const lastData = Math.max(...run.deliveries.filter((d) => d.kind === 'message' && d.key !== 'close').map((d) => d.at));
      expect(Math.min(...run.deliveries.filter((d) => d.key === 'close').map((d) => d.at))).toBeGreaterThan(lastData);
    }
  });

  it('every fault kind is planned, and a pause outlasts two leases', () => {
    for (const fault of cycle(3).flatMap((p) => p.faults)) {
      if (fault.kind === 'pause') expect(fault.durationMs).toBeGreaterThan(2 * profile.engine.leaseMs);
    }
    expect(cycle(3).flatMap((p) => p.faults.map((f) => f.kind))).toEqual(
      expect.arrayContaining(['kill', 'pause', 'connections', 'restart']),
    );
  });

  it('operator actions, application transactions and sender connection cuts are all planned, each action on runs of its phase', () => {
    const phases = [1, 2, 3].flatMap((seed) => cycle(seed));
    const actions = phases.flatMap((p) => p.actions);
    for (const op of ['cancel', 'resume', 'retry'] as const)
      for (const via of ['client', 'rest'] as const) {
        expect(actions.some((a) => a.op === op && a.via === via)).toBe(true);
      }
    expect(actions.filter((a) => a.via === 'bulk').map((a) => a.op)).toEqual(expect.arrayContaining(['cancel', 'resume']));
    for (const phase of phases) {
      const runs = new Map(phase.runs.map((r) => [r.id, r]));
      for (const a of phase.actions) {
        for (const id of a.runIds) {
          expect(runs.has(id)).toBe(true);
          expect(a.at).toBeGreaterThan(runs.get(id)!.at);
        }
        if (a.op === 'retry') expect(runs.get(a.runIds[0])!.input.gate).toBe(true);
      }
      expect(phase.rollbacks.length).toBeGreaterThan(0);
      for (const r of phase.rollbacks) expect(runs.has(r.id)).toBe(false);
    }
    const runs = phases.flatMap((p) => p.runs);
    expect(runs.some((r) => r.startVia === 'tx')).toBe(true);
    expect(runs.flatMap((r) => r.deliveries).map((d) => d.tx)).toEqual(expect.arrayContaining(['commit', 'rollback']));
    expect(phases.flatMap((p) => p.faults).flatMap((f) => (f.kind === 'connections' ? [f.targets] : []))).toEqual(
      expect.arrayContaining(['senders']),
    );
  });

  it('every seed plans a queued burst started through the client, as the batched queued starts minimum counts on', () => {
    for (let seed = 0; seed < 200; seed++) {
      const queued = cycle(seed).flatMap((p) => p.runs.filter((r) => r.queued));
      expect(queued.filter((r) => r.startVia === 'tx')).toEqual([]);
      // Bursts are of four: each one's first start leaves alone, the three behind it go out together.
      expect((queued.length / 4) * 3).toBeGreaterThanOrEqual(profile.minimums.batchedQueuedStarts);
    }
  });

  it('every seed plans the faults the minimums count on: each kind, and a first kill and a first stop cued inside a step', () => {
    for (let seed = 0; seed < 200; seed++) {
      const phases = cycle(seed);
      const faults = phases.flatMap((p) => p.faults);
      for (const kind of ['kill', 'pause', 'connections', 'restart'] as const)
        expect(faults.filter((f) => f.kind === kind).length).toBeGreaterThanOrEqual(profile.minimums[kind]);
      const [kills, stops] = phases;
      expect(kills.faults[0]).toMatchObject({ kind: 'kill', inWindow: true });
      expect(stops.faults[0]).toMatchObject({ kind: 'pause', inWindow: true });
    }
  });

  it('the generator replays the same numbers for the same seed, all in [0, 1)', () => {
    const a = new Prng(99);
    const b = new Prng(99);
    const draws = Array.from({ length: 1000 }, () => a.next());
    expect(draws).toEqual(Array.from({ length: 1000 }, () => b.next()));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
  });
});
