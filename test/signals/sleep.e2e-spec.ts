import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { JournalRepository } from 'nestjs-durable/persistence/journal.repository';
import { DbClock } from 'nestjs-durable/runtime/db-clock';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

@Workflow('nap')
class Nap implements DurableWorkflow<{ ms: number }, { woke: Date }> {
  async run(input: { ms: number }, ctx: WorkflowContext) {
    await ctx.sleep('nap', input.ms);
    return { woke: await ctx.step('woke', () => new Date()) };
  }
}

@Workflow('alarm')
class Alarm implements DurableWorkflow<{ at: Date }, Date> {
  async run(input: { at: Date }, ctx: WorkflowContext) {
    await ctx.sleepUntil('alarm', input.at);
    return ctx.step('rang', () => new Date());
  }
}

const sleepUntilOf = async (db: Db, runId: string, key = 'sleep:nap') => {
  const [row] = await db.query(`SELECT result FROM durable.steps WHERE run_id = $1 AND key = $2`, [runId, key]);
  return new Date(JSON.parse(row.result).v).getTime();
};

describe('durable sleep', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    // A long sweep interval: a sleep must wake on time without the sweeper.
    t = await startApp({ schema, providers: [Nap, Alarm], options: { sweeper: { intervalMs: 60_000 } } });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('a sleep longer than inlineWaitMs parks the run (waiting, reason sleep, until) and wakes by itself on time', async () => {
    const handle = await t.client.start(Nap, { ms: 800 });
    const run = await eventually(async () => {
      const r = await t.client.getRun(handle.runId);
      return r.status === 'waiting' && r;
    }, 'the run to park');
    const until = await sleepUntilOf(db, handle.runId);
    expect(run.waiting).toEqual({ kind: 'sleep', name: 'nap', until: new Date(until), since: expect.any(Date) });
    const [row] = await db.query(`SELECT lease_owner, wake_at FROM durable.runs WHERE id = $1`, [handle.runId]);
    expect(row).toEqual({ lease_owner: null, wake_at: new Date(until) });
    const { woke } = await handle.result({ timeout: '5s' });
    expect(woke.getTime()).toBeGreaterThanOrEqual(until);
    expect(woke.getTime() - until).toBeLessThan(300);
  });

  it('a sleep within inlineWaitMs waits in-process and never parks', async () => {
    const handle = await t.client.start(Nap, { ms: 150 });
    await handle.result({ timeout: '5s' });
    expect(await db.count('history', `run_id = $1 AND event = 'parked'`, [handle.runId])).toBe(0);
  });

  it('sleepUntil wakes at the given instant; an instant in the past does not wait', async () => {
    const at = new Date(Date.now() + 700);
    const rang = await (await t.client.start(Alarm, { at })).result({ timeout: '5s' });
    expect(rang.getTime()).toBeGreaterThanOrEqual(at.getTime());
    const past = await t.client.start(Alarm, { at: new Date(Date.now() - 60_000) });
    await past.result({ timeout: '5s' });
    expect(await db.count('history', `run_id = $1 AND event = 'parked'`, [past.runId])).toBe(0);
  });

  it('resume ends a sleep now, and says so in the history with its actor', async () => {
    const handle = await t.client.start(Nap, { ms: 3_600_000 });
    await eventually(async () => (await t.client.getRun(handle.runId)).status === 'waiting', 'the run to park');
    const resumedAt = Date.now();
    await t.client.resume(handle.runId, { actor: 'ops' });
    const { woke } = await handle.result({ timeout: '5s' });
    expect(woke.getTime() - resumedAt).toBeLessThan(1_000);
    const [row] = await db.query(`SELECT actor, detail FROM durable.history WHERE run_id = $1 AND event = 'resumed'`, [handle.runId]);
    expect(row).toEqual({ actor: 'ops', detail: { waitKind: 'sleep' } });
  });

  it('a resume still ends a sleep that a deadline change made due only to park again', async () => {
    const own = uniqueSchema();
    const ownDb = new Db(own);
    const first = await startApp({ schema: own, providers: [Nap, Alarm] });
    const { runId } = await first.client.start(Nap, { ms: 3_600_000 });
    await eventually(async () => (await first.client.getRun(runId)).status === 'waiting', 'the run to park');
    await first.close();
    // No worker here: the run stays due, as it is until an instance claims it.
    const ops = await startApp({ schema: own, providers: [Nap, Alarm], options: { worker: { enabled: false } } });
    try {
      await ops.client.setDeadline(runId, new Date(Date.now() + 86_400_000));
      const [{ due }] = await ownDb.query(`SELECT wake_at <= now() AS due FROM durable.runs WHERE id = $1`, [runId]);
      expect(due).toBe(true);
      await ops.client.resume(runId, { actor: 'ops' });
      expect(await ownDb.count('history', `run_id = $1 AND event = 'resumed'`, [runId])).toBe(1);
      expect(await sleepUntilOf(ownDb, runId)).toBeLessThanOrEqual(Date.now());
    } finally {
      await ops.close();
    }
    const second = await startApp({ schema: own, providers: [Nap, Alarm] });
    try {
      await second.client.handle(runId).result({ timeout: '5s' });
    } finally {
      await second.close();
      await ownDb.dropSchema();
    }
  });

  it('after a restart the run sleeps only the remainder of the journaled instant', async () => {
    const ms = 3_000;
    const first = await startApp({ schema, providers: [Nap, Alarm] });
    const handle = await first.client.start(Nap, { ms });
    await eventually(async () => (await first.client.getRun(handle.runId)).status === 'waiting', 'the run to park');
    const until = await sleepUntilOf(db, handle.runId);
    await first.close();
    await new Promise((r) => setTimeout(r, 1_500));
    const restarted = Date.now();
    const second = await startApp({ schema, providers: [Nap, Alarm] });
    try {
      const { woke } = await second.client.handle<{ woke: Date }>(handle.runId).result({ timeout: '10s' });
      expect(woke.getTime()).toBeGreaterThanOrEqual(until);
      // A whole sleep again would end `ms` after the restart at the earliest, 1.5 s or more after the journaled instant.
      expect(woke.getTime()).toBeLessThan(restarted + ms);
      expect(await sleepUntilOf(db, handle.runId)).toBe(until);
    } finally {
      await second.close();
    }
  });

  it("the database's clock as the process sees it never leads the database's, though the read it was set by waited for a connection", async () => {
    const handle = await t.client.start(Nap, { ms: 10 });
    await handle.result({ timeout: '5s' });
    const clock = t.app.get(DbClock);
    // Every connection of the pool held a while: the journal's read queues behind them, as an execution's does under load.
    const held = Array.from({ length: 40 }, () => t.app.get(DurableDatabase).query('SELECT pg_sleep(0.3)'));
    const loaded = await t.app.get(JournalRepository).load(handle.runId);
    clock.observe(loaded.dbNow, loaded.answeredAt); // as the executor does with a journal it loaded
    const seen = clock.now();
    const [{ now }] = await db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
    // Before: paired with the read's send, the clock led by the wait (300 ms or more), and in-process waits ended that early.
    expect(seen).toBeLessThanOrEqual(now.getTime());
    await Promise.all(held);
  });

  it("the near-wake timer counts on the database's clock: a process clock ahead of it neither fires early nor leaves the run to the sweep", async () => {
    const now = Date.now.bind(Date);
    const ahead = jest.spyOn(Date, 'now').mockImplementation(() => now() + 500);
    try {
      const ms = 2_500; // parked (more than inlineWaitMs), woken by this instance's timer: the sweep is a minute away
      const handle = await t.client.start(Nap, { ms });
      await eventually(async () => (await t.client.getRun(handle.runId)).status === 'waiting', 'the run to park');
      const { woke } = await handle.result({ timeout: '10s' }); // before: fired 500 ms early, found nothing due, and waited for the sweep
      expect(woke.getTime()).toBeGreaterThanOrEqual(await sleepUntilOf(db, handle.runId)); // new Date() is not Date.now()
    } finally {
      ahead.mockRestore();
    }
  });

  it('bad durations are refused with a clear error that fails the run at once', async () => {
    for (const ms of [-1, Number.NaN, 1e15]) {
      const handle = await t.client.start(Nap, { ms });
      await expect(handle.result({ timeout: '5s' })).rejects.toThrow(/sleep\("nap"\) duration must be a finite number/);
      expect((await t.client.getRun(handle.runId)).attempt).toBe(1);
    }
  });
});
