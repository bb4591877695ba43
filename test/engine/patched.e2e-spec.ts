import { defineSignal, DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const Go = defineSignal<null>('go');
const End = defineSignal<null>('end');
const Gone = defineSignal<null>('gone');
const signals = [Go, End, Gone];

/** Version 1, deployed first: a, go, b, end. */
@Workflow('pt-order', { signals })
class OrderV1 implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('a', () => 'a');
    await ctx.waitForSignal(Go);
    await ctx.step('b', () => 'b');
    await ctx.waitForSignal(End);
    return { fraudChecked: false };
  }
}

/** Version 2: a fraud check between go and b, behind a patch. */
@Workflow('pt-order', { signals })
class OrderV2 implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('a', () => 'a');
    await ctx.waitForSignal(Go);
    const fraudChecked = await ctx.patched('fraud-check');
    if (fraudChecked) await ctx.step('fraud-check', () => 'checked');
    await ctx.step('b', () => 'b');
    await ctx.waitForSignal(End);
    return { fraudChecked };
  }
}

/** Version 3, a careless change: step b renamed, with no patch. */
@Workflow('pt-order', { signals })
class OrderV3 implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('a', () => 'a');
    await ctx.waitForSignal(Go);
    await ctx.step('b-renamed', () => 'b');
    await ctx.waitForSignal(End);
    return { renamed: true };
  }
}

/** Version 1 as it might have been: an audit step before the wait for go, which version 2 no longer has. */
@Workflow('pt-order', { signals })
class AuditedV1 implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('a', () => 'a');
    await ctx.step('audit', () => 'audited');
    await ctx.waitForSignal(Go);
    await ctx.step('b', () => 'b');
    await ctx.waitForSignal(End);
    return { fraudChecked: false };
  }
}

/** A signal wait under a timeout, then another wait: the first's deadline checkpoint is passed on every re-execution. */
@Workflow('pt-timed', { signals })
class TimedThenEnd implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const go = await ctx.waitForSignal(Go, { timeout: '1h' });
    await ctx.waitForSignal(End);
    return { received: go.received };
  }
}

/** Two timed signal waits whose names share a prefix ('go', 'gone'), the second parked on. */
@Workflow('pt-prefix', { signals })
class GoThenGone implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.waitForSignal(Go, { timeout: '1h' });
    await ctx.waitForSignal(Gone, { timeout: '1h' });
    return null;
  }
}

/** The next deploy drops the wait for 'gone', with no patch. */
@Workflow('pt-prefix', { signals })
class GoThenEnd implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.waitForSignal(Go, { timeout: '1h' });
    await ctx.waitForSignal(End);
    return null;
  }
}

describe('ctx.patched: one deploy changes a live workflow, old runs keep the old path', () => {
  const schema = uniqueSchema('pt');
  const db = new Db(schema);
  let app: DurableTestApp | undefined;
  const deploy = async (version: unknown) => {
    await app?.close();
    app = await startApp({ schema, providers: [version as never], options: { inlineWaitMs: 0 } });
    return app;
  };
  const waitingOn = (runId: string, name: string) =>
    eventually(async () => {
      const waiting = (await app!.client.getRun(runId)).waiting;
      return waiting?.kind === 'signal' && waiting.name === name;
    }, `run ${runId} waiting for ${name}`);
  afterAll(async () => {
    await app?.close();
    await db.dropSchema();
  });

  it('a run past the patch point keeps the old branch, one before it and a new one take the new branch, across restarts', async () => {
    let current = await deploy(OrderV1);
    const past = await current.client.start(OrderV1, null);
    const before = await current.client.start(OrderV1, null);
    await waitingOn(past.runId, 'go');
    await waitingOn(before.runId, 'go');
    await current.signals.signal(past.runId, Go, null);
    await waitingOn(past.runId, 'end'); // b recorded by version 1: past the point the patch will sit at

    current = await deploy(OrderV2);
    const fresh = await current.client.start(OrderV2, null);
    await current.client.resume(past.runId); // executes under version 2 and parks again at end
    await eventually(async () => (await db.count('steps', `run_id = $1 AND key = 'patch:fraud-check'`, [past.runId])) === 1, 'decided');
    await current.signals.signal(before.runId, Go, null);
    await current.signals.signal(fresh.runId, Go, null);
    for (const run of [before, fresh]) await waitingOn(run.runId, 'end');

    current = await deploy(OrderV2); // a restart: the decisions are journaled, not recomputed
    for (const run of [past, before, fresh]) await current.signals.signal(run.runId, End, null);
    const result = (runId: string) => current.client.handle(runId).result({ timeout: '10s' });
    expect(await result(past.runId)).toEqual({ fraudChecked: false });
    expect(await result(before.runId)).toEqual({ fraudChecked: true });
    expect(await result(fresh.runId)).toEqual({ fraudChecked: true });
    expect(await db.count('steps', `run_id = $1 AND key = 'fraud-check'`, [past.runId])).toBe(0);
    expect((await current.client.getRun(past.runId)).warning).toBeUndefined();
  });

  it('a signal wait under a timeout whose signal came is passed without a warning: its deadline checkpoint counts as reached', async () => {
    const current = await deploy(TimedThenEnd);
    const run = await current.client.start(TimedThenEnd, null);
    await waitingOn(run.runId, 'go');
    await current.signals.signal(run.runId, Go, null);
    await waitingOn(run.runId, 'end');
    expect((await current.client.getRun(run.runId)).warning).toBeUndefined();
    await current.signals.signal(run.runId, End, null);
    expect(await current.client.handle(run.runId).result({ timeout: '10s' })).toEqual({ received: true });
  });

  it("a timed signal wait counts its own deadline as reached, not another's whose name it begins ('go' and 'gone')", async () => {
    let current = await deploy(GoThenGone);
    const run = await current.client.start(GoThenGone, null);
    await waitingOn(run.runId, 'go');
    await current.signals.signal(run.runId, Go, null);
    await waitingOn(run.runId, 'gone'); // 'gone''s deadline journaled

    current = await deploy(GoThenEnd);
    await current.client.resume(run.runId);
    const warned = await eventually(async () => (await current.client.getRun(run.runId)).warning, 'the warning');
    expect(warned).toMatchObject({ code: 'UNREACHED_CHECKPOINTS', keys: ['signal-deadline:gone'] });
  });

  it('a change that strands a checkpoint marks the run with a warning naming it, and the run goes on', async () => {
    let current = await deploy(OrderV1);
    const run = await current.client.start(OrderV1, null);
    await waitingOn(run.runId, 'go');
    await current.signals.signal(run.runId, Go, null);
    await waitingOn(run.runId, 'end');

    current = await deploy(OrderV3);
    await current.client.resume(run.runId);
    const warned = await eventually(async () => (await current.client.getRun(run.runId)).warning, 'the warning');
    expect(warned).toMatchObject({ code: 'UNREACHED_CHECKPOINTS', keys: ['b'], message: expect.stringMatching(/renamed step/) });
    await current.signals.signal(run.runId, End, null);
    expect(await current.client.handle(run.runId).result({ timeout: '10s' })).toEqual({ renamed: true });
  });

  it("a checkpoint the code no longer reaches (a removed step) counts as past every patch point met after it: the old path, and the run's warning names it", async () => {
    let current = await deploy(AuditedV1);
    const run = await current.client.start(AuditedV1, null);
    await waitingOn(run.runId, 'go'); // a and audit recorded, before the point the patch will sit at

    current = await deploy(OrderV2); // removes audit (safe alone) and adds the patch after go
    await current.signals.signal(run.runId, Go, null);
    await waitingOn(run.runId, 'end');
    const warned = await eventually(async () => (await current.client.getRun(run.runId)).warning, 'the warning');
    expect(warned).toMatchObject({ code: 'UNREACHED_CHECKPOINTS', keys: ['audit'] });
    await current.signals.signal(run.runId, End, null);
    // It cannot be told from a checkpoint recorded past the point: the run keeps the path its old code had.
    expect(await current.client.handle(run.runId).result({ timeout: '10s' })).toEqual({ fraudChecked: false });
  });
});
