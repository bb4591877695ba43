import { AsyncLocalStorage } from 'node:async_hooks';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/** Stands for a request's store (a nestjs-cls tenant, a request-scoped logger). */
const request = new AsyncLocalStorage<string>();
/** What each execution of a run saw in its step, in order. */
const seen = new Map<string, Array<string | undefined>>();

@Workflow('context-probe')
class ContextProbe implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    const execution = (seen.get(ctx.runId)?.length ?? 0) + 1;
    await ctx.step(`look#${execution}`, () => void seen.set(ctx.runId, [...(seen.get(ctx.runId) ?? []), request.getStore()]));
    return ctx.waitForSignal<string>(`go#${execution}`);
  }
}

describe("a run executes in the worker's own async context, never in the one of the request that triggered it", () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    // No sweeper: the claim pass of the last test is the one the test nudges.
    t = await startApp({ schema, providers: [ContextProbe], options: { sweeper: false, inlineWaitMs: 0 } });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  const parked = (runId: string) => eventually(async () => (await t.client.getRun(runId)).status === 'waiting', 'the run to park');

  it("a run started (and executed at once) inside a request does not see that request's store", async () => {
    const run = await request.run('tenant-a', () => t.client.start(ContextProbe, null));
    await parked(run.runId);
    expect(seen.get(run.runId)).toEqual([undefined]);
  });

  it("a run claimed by a signal delivered inside a request does not see that request's store", async () => {
    const run = await t.client.start(ContextProbe, null);
    await parked(run.runId);
    const delivery = await request.run('tenant-b', () => t.signals.signal(run.runId, 'go#1', 'now'));
    expect(delivery.accepted).toBe(true);
    await eventually(async () => seen.get(run.runId)?.length === 2 && seen.get(run.runId), 'the second execution');
    expect(seen.get(run.runId)).toEqual([undefined, undefined]);
  });

  it("a claim pass nudged inside a request does not run its executions in that request's context", async () => {
    const run = await t.client.start(ContextProbe, null);
    await parked(run.runId);
    // Due now, without a NOTIFY: only the nudge below claims it.
    await db.query(`UPDATE durable.runs SET wake_at = now() WHERE id = $1`, [run.runId]);
    request.run('tenant-c', () => t.get(DurableWorker).nudge());
    await eventually(async () => seen.get(run.runId)?.length === 2 && seen.get(run.runId), 'the claimed execution');
    expect(seen.get(run.runId)).toEqual([undefined, undefined]);
  });
});
