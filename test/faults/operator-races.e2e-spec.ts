import { Injectable } from '@nestjs/common';
import { DurableWorkflow, InvalidTransitionError, Workflow, WorkflowContext } from 'nestjs-durable';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/** A seeded PRNG (mulberry32): the races differ per iteration but replay the same way every run. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

@Injectable()
class Trace {
  readonly events: string[] = [];
}

@Workflow('short-nap')
class ShortNap implements DurableWorkflow<{ ms: number }, string> {
  async run(input: { ms: number }, ctx: WorkflowContext) {
    await ctx.step('before', () => true);
    await ctx.sleep('nap', input.ms);
    await ctx.step('after', () => true);
    return 'woke';
  }
}

/** Wraps its durable calls in try/catch/finally, as real code does; pauses must not trigger them. */
@Workflow('guarded')
class Guarded implements DurableWorkflow<null, string> {
  constructor(private readonly trace: Trace) {}
  async run(_: null, ctx: WorkflowContext) {
    try {
      const value = await ctx.waitForSignal<string>('go');
      await ctx.sleep('then-nap', 300);
      return value;
    } catch (error) {
      this.trace.events.push(`catch:${(error as Error).message}`);
      throw error;
    } finally {
      this.trace.events.push('finally');
    }
  }
}

const ILLEGAL_AFTER_END = new Set([
  'claimed',
  'lease-taken-over',
  'parked',
  'completed',
  'failed',
  'retry-scheduled',
  'resumed',
  'retried',
]);

describe('operator races: cancel, resume and retry against completions and timer wakes', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({
      schema,
      providers: [Trace, ShortNap, Guarded],
      options: { inlineWaitMs: 0, sweeper: { intervalMs: 50 }, worker: { concurrency: 20 } },
    });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('100 races of each: only legal transitions, a cancelled run never comes back, a repeated resume is a no-op', async () => {
    const random = prng(20261129);
    const iterations = Array.from({ length: 100 }, async (_, i) => {
      const run = await t.client.start(ShortNap, { ms: 20 + Math.floor(random() * 60) });
      const actions: Array<() => Promise<unknown>> = [
        async () => t.client.cancel(run.runId, `race ${i}`),
        async () => t.client.resume(run.runId),
        async () => t.client.resume(run.runId),
        async () => t.client.retry(run.runId),
      ].sort(() => random() - 0.5);
      const delays = actions.map(() => Math.floor(random() * 80));
      const outcomes = await Promise.all(
        actions.map((action, k) =>
          new Promise((r) => setTimeout(r, delays[k])).then(action).then(
            () => 'ok',
            (e: Error) => e.constructor.name,
          ),
        ),
      );
      return { runId: run.runId, outcomes };
    });
    const results = await Promise.all(iterations);
    for (const { outcomes } of results) {
      for (const outcome of outcomes) expect(['ok', InvalidTransitionError.name]).toContain(outcome);
    }
    // Everything settles: each run ends completed or cancelled, never failed, never back from a cancel.
    await eventually(
      async () => (await db.count('runs', `workflow = 'short-nap' AND status NOT IN ('completed', 'cancelled')`)) === 0,
      'every run to end',
      20_000,
    );
    await new Promise((r) => setTimeout(r, 300)); // time for any late write to show itself
    const histories = await db.query<{ run_id: string; events: string[] }>(
      `SELECT run_id, array_agg(event ORDER BY id) AS events FROM durable.history WHERE run_id = ANY($1) GROUP BY run_id`,
      [results.map((r) => r.runId)],
    );
    for (const { run_id, events } of histories) {
      const end = events.findIndex((e) => e === 'cancelled' || e === 'completed');
      expect([run_id, events.slice(end + 1).filter((e) => ILLEGAL_AFTER_END.has(e))]).toEqual([run_id, []]);
      expect(events.filter((e) => e === 'cancelled' || e === 'completed')).toHaveLength(1);
      expect(events).not.toContain('retried'); // retry applies to failed runs only, and none failed
    }
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM durable.runs WHERE workflow = 'short-nap' AND status = 'cancelled'`);
    expect(n).toBeGreaterThan(0); // the schedule did make cancels win some races
  });

  it('a resume of a run that is not waiting is a no-op, and so is a second resume', async () => {
    const run = await t.client.start(ShortNap, { ms: 5_000 });
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to park');
    const answers = await Promise.allSettled([t.client.resume(run.runId), t.client.resume(run.runId), t.client.resume(run.runId)]);
    expect(await run.result({ timeout: '5s' })).toBe('woke');
    // Each made it due now (or found it on its way), or, on a busy machine, came after it completed: refused, as below.
    expect(answers.filter((a) => a.status === 'fulfilled').length).toBeGreaterThanOrEqual(1);
    for (const answer of answers) if (answer.status === 'rejected') expect(answer.reason).toBeInstanceOf(InvalidTransitionError);
    await expect(t.client.resume(run.runId)).rejects.toThrow(InvalidTransitionError); // completed: nothing to resume
    // The resumes that found the run due already changed nothing and answer false: one `resumed` in its history.
    expect(await db.count('history', `run_id = '${run.runId}' AND event = 'resumed'`)).toBe(1);
    expect(answers.filter((a) => a.status === 'fulfilled' && a.value)).toHaveLength(1);
  });

  it('user code that wraps durable calls in try/catch/finally still pauses; neither catch nor finally runs for a pause', async () => {
    const trace = t.get(Trace);
    const run = await t.client.start(Guarded, null);
    await eventually(async () => (await t.client.getRun(run.runId)).waiting?.kind === 'signal', 'the run to park on the signal');
    await new Promise((r) => setTimeout(r, 100));
    expect(trace.events).toEqual([]);
    await t.signals.signal(run.runId, 'go', 'value');
    await eventually(async () => (await t.client.getRun(run.runId)).waiting?.kind === 'sleep', 'the run to park on the sleep');
    expect(trace.events).toEqual([]);
    expect(await run.result({ timeout: '5s' })).toBe('value');
    expect(trace.events).toEqual(['finally']);
  });
});
