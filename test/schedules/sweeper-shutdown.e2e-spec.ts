import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { SchedulePass, SchedulePassResult } from 'nestjs-durable/worker/schedule-pass';
import { WakeSweeper } from 'nestjs-durable/worker/wake-sweeper';
import { Db, eventually, startApp, uniqueSchema } from '../setup/durable-app';

describe('the sweeper at shutdown', () => {
  const schema = uniqueSchema();
  afterAll(() => new Db(schema).dropSchema());

  it('a schedule pass that ends while the app shuts down aims at no next slot: nothing warms or sweeps a closed pool', async () => {
    const app = await startApp({ schema });
    const sweeper = app.get(WakeSweeper);
    const timers = sweeper as unknown as { firing?: Promise<void>; nextSlot?: NodeJS.Timeout; warming?: NodeJS.Timeout };
    await eventually(async () => timers.firing === undefined, "the boot's schedule pass to end");
    let finish!: (result: SchedulePassResult) => void;
    // The pass is held until the shutdown has begun; it then says a schedule is due in a moment.
    const run = jest.spyOn(app.get(SchedulePass), 'run').mockReturnValue(new Promise((resolve) => (finish = resolve)));
    const warm = jest.spyOn(app.get(DurableDatabase), 'warm');
    sweeper.soon();
    expect(run).toHaveBeenCalledTimes(1);
    const shutdown = jest.spyOn(sweeper, 'beforeApplicationShutdown');
    const closing = app.close();
    await eventually(async () => shutdown.mock.calls.length > 0, 'the shutdown to reach the sweeper');
    finish({ started: 0, nextDueInMs: 50 });
    await closing;
    // A timer cleared or fired is destroyed; one still to fire would sweep or warm after the pool closed.
    const pending = (timer?: NodeJS.Timeout) => timer !== undefined && !(timer as unknown as { _destroyed: boolean })._destroyed;
    expect([pending(timers.nextSlot), pending(timers.warming)]).toEqual([false, false]);
    expect(warm).not.toHaveBeenCalled();
  });
});
