import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/** Opened by the test: holds the run inside its step while the signal is delivered. */
let release!: () => void;
let entered = false;
const gate = new Promise<void>((resolve) => (release = resolve));

/** A step, then a wait for `go` with a timeout the run waits out in-process (within inlineWaitMs). */
@Workflow('iw-busy-then-wait')
class BusyThenWait implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('busy', async () => {
      entered = true;
      await gate;
    });
    return ctx.waitForSignal<string>('go', { timeout: '20s' });
  }
}

describe('waits in-process: the wakes of a run executing here', () => {
  const schema = uniqueSchema('iw');
  const db = new Db(schema);
  let app: DurableTestApp;
  beforeAll(async () => {
    // The signal wait's 20 s are waited in-process: a wake it missed would hold the run that long.
    app = await startApp({ schema, providers: [BusyThenWait], options: { inlineWaitMs: 20_000, leaseMs: 60_000 } });
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  it('a signal delivered while the run executes a step ends its later wait at once, not when the wait has run out', async () => {
    const run = await app.client.start(BusyThenWait, null);
    await eventually(async () => entered, 'the run inside its step');
    await app.signals.signal(run.runId, 'go', 'early');
    release();
    expect(await run.result({ timeout: '10s' })).toEqual({ received: true, payload: 'early' });
  });
});
