import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { performance } from 'node:perf_hooks';
import { DurableModule, DurableWorkflow, SignalService, Step, Workflow, WorkflowClient, WorkflowContext } from 'nestjs-durable';
import { closedLoop, until } from '../measure';
import { Marks } from './marks';
import type { Peer, PeerSpec } from './peer';

const lateness = new Marks();
const spawned = new Marks();
/** Runs per key group of `park`: signalByKeys reaches at most 1,000 runs a call. */
const PARK_GROUP = 1_000;

/** The workflow every throughput and latency figure is made of: three trivial @Step methods. */
@Workflow('bench-three-steps')
export class ThreeSteps implements DurableWorkflow<number, number> {
  async run(n: number): Promise<number> {
    return this.three(await this.two(await this.one(n)));
  }
  @Step() async one(n: number) {
    return n + 1;
  }
  @Step() async two(n: number) {
    return n + 1;
  }
  @Step() async three(n: number) {
    return n + 1;
  }
}

@Workflow('bench-await-go')
export class AwaitGo implements DurableWorkflow<null, string> {
  run(_: null, ctx: WorkflowContext): Promise<string> {
    return ctx.waitForSignal<string>('go');
  }
}

/** The same wait as a select of two arms: `go`, or an hour's timer that never fires in the bench. */
@Workflow('bench-select-go')
export class SelectGo implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext): Promise<string> {
    const won = await ctx.select('go-or-hour', { go: ctx.signal<string>('go'), hour: ctx.timer('1h') });
    return won.key === 'go' ? won.value : 'timed out';
  }
}

/**
 * Sleeps `ms` and, when asked to report, hands back how late it woke against the instant it first
 * asked for. Also the workflow of the runs the scale section seeds by SQL (report false).
 */
@Workflow('bench-nap')
export class Nap implements DurableWorkflow<NapInput, null> {
  async run({ ms, report }: NapInput, ctx: WorkflowContext): Promise<null> {
    const intended = report ? lateness.first(ctx.runId) + ms : 0;
    await ctx.sleep('nap', ms);
    if (report) lateness.put(ctx.runId, performance.now() - intended);
    return null;
  }
}
export interface NapInput {
  ms: number;
  report: boolean;
}

/** The memory figure's run: a step, then a wait for `go` with a day's timeout (a signal and a timer at once). */
@Workflow('bench-park')
export class Park implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext): Promise<string> {
    await this.touch();
    const outcome = await ctx.waitForSignal<string>('go', { timeout: '1d' });
    return outcome.received ? outcome.payload : 'timed out';
  }
  @Step() async touch() {
    return true;
  }
}

@Workflow('bench-fan-out')
export class FanOut implements DurableWorkflow<number, number> {
  async run(children: number, ctx: WorkflowContext): Promise<number> {
    const handles = [];
    for (let i = 0; i < children; i++) handles.push(await ctx.startChild(ThreeSteps, i, { step: `child-${i}` }));
    spawned.put(ctx.runId, performance.now());
    const results = await ctx.all(handles);
    return results.length;
  }
}

/** nestjs-durable in a Nest application context, as a worker process would run it. */
export async function openOurs(spec: PeerSpec): Promise<Peer> {
  @Module({
    imports: [
      DurableModule.forRoot({
        connection: spec.url,
        schema: spec.schema ?? 'durable',
        worker: { enabled: spec.worker !== false, concurrency: spec.concurrency },
        ...(spec.inlineWaitMs === undefined ? {} : { inlineWaitMs: spec.inlineWaitMs }),
        ...(spec.sweeperMs === undefined ? {} : { sweeper: { intervalMs: spec.sweeperMs } }),
        ...(spec.groupCommit === undefined ? {} : { groupCommit: spec.groupCommit }),
        queues: { bench: { concurrency: spec.concurrency } },
      }),
    ],
    providers: [ThreeSteps, AwaitGo, SelectGo, Nap, Park, FanOut],
  })
  class BenchModule {}

  const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
  const client = app.get(WorkflowClient);
  const signals = app.get(SignalService);
  const handles = new Map<string, Awaited<ReturnType<WorkflowClient['start']>>>();

  return {
    async runOnce() {
      return (await client.start(ThreeSteps, 1)).result();
    },
    async runQueued() {
      return (await client.start(ThreeSteps, 1, { queue: 'bench' })).result();
    },
    waiting: {
      async start(select) {
        const handle = await client.start(select ? SelectGo : AwaitGo, null);
        handles.set(handle.runId, handle);
        await until(async () => (await client.getRun(handle.runId)).status === 'waiting', `run ${handle.runId} to wait`);
        return handle.runId;
      },
      async result(runId) {
        const handle = handles.get(runId) ?? client.handle(runId);
        handles.delete(runId);
        return handle.result();
      },
      async deliver(runId) {
        await signals.signal(runId, 'go', 'now');
      },
    },
    async sleepLateness(ms) {
      const { runId } = await client.start(Nap, { ms, report: true });
      return lateness.take(runId);
    },
    async park(count, group) {
      let i = 0;
      await closedLoop(() => client.start(Park, null, { keys: { group: `${group}-${Math.floor(i++ / PARK_GROUP)}` } }), {
        concurrency: 16,
        count,
      });
    },
    async wake(count, group) {
      for (let g = 0; g * PARK_GROUP < count; g++) await signals.signalByKeys({ group: `${group}-${g}` }, 'go', 'now', { workflow: Park });
    },
    async fanOut(children) {
      const t0 = performance.now();
      const handle = await client.start(FanOut, children);
      await handle.result();
      const totalMs = performance.now() - t0;
      return { spawnMs: (await spawned.take(handle.runId)) - t0, totalMs };
    },
    close: () => app.close(),
  };
}
