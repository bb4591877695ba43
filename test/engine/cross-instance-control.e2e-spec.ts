import { DeadlineExceededError, DurableWorkflow, Workflow, WorkflowClient, WorkflowContext } from 'nestjs-durable';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/** The runs executing, each held until the test opens its gate. */
const gates = new Map<string, () => void>();

/** A queued workflow: its start notifies the queue channel. */
@Workflow('ctl-queued', { queue: 'ctl' })
class Queued implements DurableWorkflow<null, string> {
  async run() {
    return 'admitted';
  }
}

@Workflow('ctl-gated')
class Gated implements DurableWorkflow<null, null> {
  async run(_: null, ctx: WorkflowContext) {
    await new Promise<void>((open) => gates.set(ctx.runId, open));
    return null;
  }
}

/** Polls in naps shorter than inlineWaitMs, so it never parks, until a deadline throws; then cleans up. */
@Workflow('ctl-poller', { deadlineGrace: '30s' })
class Poller implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      for (let i = 0; ; i++) await ctx.sleep(`poll-${i}`, '20ms');
    } catch (error) {
      if (!(error instanceof DeadlineExceededError)) throw error;
      return ctx.step('cleanup', async () => 'cleaned up');
    }
  }
}

/**
 * A cancel or a new deadline made by one instance reaches the execution on another at once: the change
 * names the run on the control channel, and the executing instance renews its leases then. Leases here
 * are renewed every 40 s, so within a test the interval's renewal never tells the execution.
 */
describe('a change made on one instance to a run another executes', () => {
  // The longest schema name (48 characters): its queue and control channels would pass Postgres' 63 bytes, and take hashed names.
  const schema = `${uniqueSchema('ctl')}_`.padEnd(48, 'x');
  const db = new Db(schema);
  let executing: DurableTestApp;
  let operator: DurableTestApp;

  beforeAll(async () => {
    const options = { leaseMs: 120_000, queues: { ctl: { concurrency: 1 } } };
    executing = await startApp({ schema, providers: [Gated, Poller, Queued], options });
    // The operator's instance executes nothing: every run here is the other's.
    operator = await startApp({ schema, providers: [Gated, Poller, Queued], options: { ...options, worker: { enabled: false } } });
  });
  afterAll(async () => {
    for (const open of gates.values()) open();
    await Promise.all([executing?.close(), operator?.close()]);
    await db.dropSchema();
  });

  it("a cancel stops the other instance's execution at once, not at its next lease renewal", async () => {
    const worker = executing.get(DurableWorker);
    const run = await executing.get(WorkflowClient).start(Gated, null);
    await eventually(async () => gates.has(run.runId), 'executing on the other instance');
    expect(worker.isExecuting(run.runId)).toBe(true);
    await operator.get(WorkflowClient).cancel(run.runId, 'enough');
    await eventually(async () => !worker.isExecuting(run.runId), 'its execution stopping');
    expect(await db.count('runs', `id = $1 AND status = 'cancelled'`, [run.runId])).toBe(1);
  });

  it("a deadline set reaches the other instance's execution at once: its next wait throws by it", async () => {
    const run = await executing.get(WorkflowClient).start(Poller, null);
    await eventually(async () => (await db.count('steps', `run_id = $1 AND kind = 'sleep'`, [run.runId])) >= 3, 'polling');
    await operator.get(WorkflowClient).setDeadline(run.runId, new Date());
    expect(await run.result({ timeout: '10s' })).toBe('cleaned up');
    expect(await db.count('steps', `run_id = $1 AND kind = 'deadline-passed'`, [run.runId])).toBe(1);
  });

  it('on a schema of 48 characters a queued run starts, is admitted and ends: its channels fit', async () => {
    expect(schema).toHaveLength(48);
    const run = await operator.get(WorkflowClient).start(Queued, null);
    expect(await run.result({ timeout: '10s' })).toBe('admitted');
  });
});
