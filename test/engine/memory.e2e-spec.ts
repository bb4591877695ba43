import { Injectable } from '@nestjs/common';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { defineChannel, DurableWorkflow, SignalService, Workflow, WorkflowContext } from 'nestjs-durable';
import { runScope } from 'nestjs-durable/runtime/run-scope';
import { Db, DurableTestApp, startApp, uniqueSchema } from '../setup/durable-app';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const WARM_UP = 100;
const WAKES = 1_000;

const Ticks = defineChannel<number>('ticks');

/** What each handling saw: the listeners on the lease of the execution handling it, and the heap at two marks. */
@Injectable()
class Probe {
  /** By message: the listeners on the lease of the execution that handled it (its last handling, were there two). */
  readonly listeners = new Map<number, number>();
  readonly leases = new Set<unknown>();
  readonly heap = new Map<number, number>();

  observe(tick: number): void {
    const lease = runScope.getStore()!.execution.lease;
    this.leases.add(lease);
    this.listeners.set(tick, lease.listenerCount);
    if (tick === WARM_UP || tick === WAKES) {
      gc();
      this.heap.set(tick, process.memoryUsage().heapUsed);
    }
  }
}

/**
 * Each handling sends the next message to its own channel while the run executes: the run's park then
 * loses the race with that delivery and it re-executes in-process, under the same lease, once per message.
 */
@Workflow('self-feeding', { channels: [Ticks] })
class SelfFeeding implements DurableWorkflow<number, number> {
  constructor(
    private readonly signals: SignalService,
    private readonly probe: Probe,
  ) {}

  async run(total: number, ctx: WorkflowContext) {
    const last = await ctx.consume(
      Ticks,
      async (message) => {
        this.probe.observe(message.payload);
        if (message.payload < total) await this.signals.send(ctx.runId, Ticks, `t${message.payload + 1}`, message.payload + 1);
      },
      { until: (message) => message.payload === total },
    );
    return last.payload;
  }
}

describe('memory of a long-lived run', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    // A busy machine (CI runs other files beside this one) must not decide the lease count: a lease long
    // enough that no renewal can lapse, and an in-process wait long enough that the first tick (sent
    // by the test after the start) never finds the run parked and claims it under a new lease.
    t = await startApp({ schema, providers: [Probe, SelfFeeding], options: { leaseMs: 60_000, inlineWaitMs: 10_000 } });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('a run woken 1,000 times in-process under one lease keeps one listener on it and the heap flat', async () => {
    const probe = t.get(Probe);
    const handle = await t.client.start(SelfFeeding, WAKES);
    await t.signals.send(handle.runId, Ticks, 't1', 1);
    expect(await handle.result({ timeout: '110s' })).toBe(WAKES);

    expect(probe.listeners.size).toBe(WAKES);
    expect(probe.leases.size).toBe(1); // every wake after the first delivery executed under one lease
    // Each execution's own two (its lease's loss, its deadline), and none of the ended ones.
    expect([...probe.listeners.values()].filter((n) => n !== 2)).toEqual([]);
    // Ended executions and their journals are collected: 900 more wakes leave the heap where it was, give or take.
    const growth = probe.heap.get(WAKES)! - probe.heap.get(WARM_UP)!;
    expect(growth).toBeLessThan(8 * 1024 * 1024);
  }, 120_000);
});
