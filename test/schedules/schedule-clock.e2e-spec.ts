import type { DataSource } from 'typeorm';
import { defineSignal, DURABLE_DATA_SOURCE, DurableWorkflow, ScheduledInput, Workflow, WorkflowContext } from 'nestjs-durable';
import { DbClock } from 'nestjs-durable/runtime/db-clock';
import { jitterOf } from 'nestjs-durable/schema/schedule-spec';
import { DurableTestingModule } from 'nestjs-durable/testing';

const Done = defineSignal<null>('done');

@Workflow('report')
class Report implements DurableWorkflow<ScheduledInput & { team?: string }, string> {
  async run(input: ScheduledInput & { team?: string }) {
    return `${input.team ?? 'all'}@${input.scheduledAt.toISOString()}`;
  }
}

/** A run that stays unfinished until signalled: what overlap is about. */
@Workflow('long-job')
class LongJob implements DurableWorkflow<ScheduledInput, null> {
  async run(_: ScheduledInput, ctx: WorkflowContext) {
    await ctx.waitForSignal(Done);
    return null;
  }
}

const MINUTE = 60_000;

/** The runs a schedule started, oldest slot first. */
async function runsOf(durable: DurableTestingModule, name: string): Promise<Array<{ id: string; status: string; output: string | null }>> {
  return durable
    .get<DataSource>(DURABLE_DATA_SOURCE)
    .query(`SELECT id, status, output FROM "${durable.schema}".runs WHERE starts_with(id, $1) ORDER BY id`, [`schedule:${name}:`]);
}

async function skipsOf(durable: DurableTestingModule, name: string): Promise<Array<{ slot: string; reason: string }>> {
  const rows = await durable
    .get<DataSource>(DURABLE_DATA_SOURCE)
    .query(`SELECT slot, reason FROM "${durable.schema}".schedule_skips WHERE schedule = $1 ORDER BY slot`, [name]);
  return rows.map((r: { slot: Date; reason: string }) => ({ slot: r.slot.toISOString(), reason: r.reason }));
}

const slotsOf = (runs: Array<{ id: string }>, name: string) => runs.map((r) => r.id.slice(`schedule:${name}:`.length));

/** The local wall-clock time of an instant in a zone, as HH:MM. */
const localTime = (iso: string, timeZone: string) =>
  new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));

describe('schedules on the testing clock: DST, catch-up after downtime, overlap', () => {
  const modules: DurableTestingModule[] = [];
  const create = async (now: Date) => {
    const durable = await DurableTestingModule.create({ providers: [Report, LongJob], now });
    modules.push(durable);
    return durable;
  };
  afterAll(async () => {
    for (const durable of modules) await durable.close();
  });

  it('DST in March 2026: 02:30 Europe/Berlin runs once on the 29th at 03:00 local (01:00Z); 09:00 America/New_York stays 09:00 local', async () => {
    const durable = await create(new Date('2026-03-07T12:00:00Z'));
    await durable.schedules.create({ name: 'berlin', workflow: Report, cron: '30 2 * * *', timezone: 'Europe/Berlin' });
    await durable.schedules.create({ name: 'new-york', workflow: Report, cron: '0 9 * * *', timezone: 'America/New_York' });
    await durable.clock.advance('23d');
    const berlin = slotsOf(await runsOf(durable, 'berlin'), 'berlin');
    expect(berlin.filter((slot) => slot.startsWith('2026-03-2') || slot.startsWith('2026-03-3'))).toEqual([
      '2026-03-20T01:30:00.000Z',
      '2026-03-21T01:30:00.000Z',
      '2026-03-22T01:30:00.000Z',
      '2026-03-23T01:30:00.000Z',
      '2026-03-24T01:30:00.000Z',
      '2026-03-25T01:30:00.000Z',
      '2026-03-26T01:30:00.000Z',
      '2026-03-27T01:30:00.000Z',
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    const newYork = slotsOf(await runsOf(durable, 'new-york'), 'new-york');
    expect(newYork).toEqual(expect.arrayContaining(['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z', '2026-03-09T13:00:00.000Z'])); // EST, then EDT from the 8th
    expect(newYork.length).toBe(23);
    expect(new Set(newYork.map((slot) => localTime(slot, 'America/New_York')))).toEqual(new Set(['09:00']));
    expect((await runsOf(durable, 'berlin')).every((run) => run.status === 'completed')).toBe(true);
    expect(await skipsOf(durable, 'berlin')).toEqual([]);
  });

  it('DST with a list of hours (30 2,14 Europe/Berlin): its 02:30 runs once on the skipped night (03:00 local) and once on the repeated one (the first 02:30); a step (every 30 minutes) keeps its pace through both', async () => {
    /** The slots of a twice-daily and a half-hourly schedule in Europe/Berlin, made at `start`, over `span`. */
    const slotsOver = async (start: string, span: '2d' | '26h') => {
      const durable = await create(new Date(start));
      for (const [name, cron] of [
        ['twice-daily', '30 2,14 * * *'],
        ['half-hourly', '*/30 * * * *'],
      ])
        await durable.schedules.create({ name, workflow: Report, cron, timezone: 'Europe/Berlin' });
      await durable.clock.advance(span);
      const of = async (name: string) => slotsOf(await runsOf(durable, name), name);
      return { twiceDaily: await of('twice-daily'), halfHourly: await of('half-hourly') };
    };
    expect((await slotsOver('2026-03-28T12:00:00Z', '2d')).twiceDaily).toEqual([
      '2026-03-28T13:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T12:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    const autumn = await slotsOver('2026-10-24T12:00:00Z', '26h');
    expect(autumn.twiceDaily).toEqual(['2026-10-24T12:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T13:30:00.000Z']);
    expect(autumn.halfHourly.filter((slot) => slot >= '2026-10-24T23:00' && slot < '2026-10-25T03:00')).toEqual(
      ['23:00', '23:30', '00:00', '00:30', '01:00', '01:30', '02:00', '02:30'].map((t) => `2026-10-2${t < '12' ? 5 : 4}T${t}:00.000Z`),
    );
  });

  it('DST in October 2026: 02:30 Europe/Berlin runs once on the 25th, at the first 02:30 (00:30Z); New York stays 09:00 local into November', async () => {
    const durable = await create(new Date('2026-10-23T12:00:00Z'));
    await durable.schedules.create({ name: 'berlin', workflow: Report, cron: '30 2 * * *', timezone: 'Europe/Berlin' });
    await durable.schedules.create({ name: 'new-york', workflow: Report, cron: '0 9 * * *', timezone: 'America/New_York' });
    await durable.clock.advance('11d');
    expect(slotsOf(await runsOf(durable, 'berlin'), 'berlin').slice(0, 4)).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
      '2026-10-27T01:30:00.000Z',
    ]);
    const newYork = slotsOf(await runsOf(durable, 'new-york'), 'new-york');
    expect(newYork).toEqual(expect.arrayContaining(['2026-10-31T13:00:00.000Z', '2026-11-01T14:00:00.000Z', '2026-11-02T14:00:00.000Z']));
    expect(new Set(newYork.map((slot) => localTime(slot, 'America/New_York')))).toEqual(new Set(['09:00']));
  });

  it("a slot's run has the id schedule:<name>:<slot ISO UTC> and the input { ...input, scheduledAt }", async () => {
    const durable = await create(new Date('2026-06-01T10:00:30Z'));
    await durable.schedules.create({ name: 'hourly', workflow: 'report', cron: '0 * * * *', input: { team: 'ops' } });
    await durable.clock.advance('1h');
    const [run] = await runsOf(durable, 'hourly');
    expect(run).toEqual({ id: 'schedule:hourly:2026-06-01T11:00:00.000Z', status: 'completed', output: expect.any(String) });
    expect(await durable.client.handle(run.id).result()).toBe('ops@2026-06-01T11:00:00.000Z');
    const view = await durable.schedules.get('hourly');
    expect(view.lastRun).toEqual({ runId: run.id, status: 'completed', scheduledAt: new Date('2026-06-01T11:00:00.000Z') });
    expect(view.nextFireTimes.map((d) => d.toISOString())).toEqual([
      '2026-06-01T12:00:00.000Z',
      '2026-06-01T13:00:00.000Z',
      '2026-06-01T14:00:00.000Z',
      '2026-06-01T15:00:00.000Z',
      '2026-06-01T16:00:00.000Z',
    ]);
  });

  it("jitter delays each slot's run by a stable amount up to it, cut to before the next slot: the run waits (kind 'start') until then, and no slot is skipped for it", async () => {
    const booting = performance.now();
    const durable = await create(new Date('2026-06-01T10:00:30Z'));
    await durable.schedules.create({ name: 'staggered', workflow: Report, cron: '* * * * *', jitter: '10m' });
    await durable.clock.advance('30s'); // the 10:01 slot fires
    // The schedules' clock ran from the module's creation: the boot and the create, real time, came off the 30 s.
    const elapsed = performance.now() - booting;
    const [run] = await runsOf(durable, 'staggered');
    // Up to 10 minutes, cut to the minute before the 10:02 slot: still waiting there, it would count as
    // unfinished and that slot be skipped (with the default overlap), and so on every other minute.
    const delay = jitterOf('staggered', new Date('2026-06-01T10:01:00Z'), 59_999);
    expect(delay).toBeGreaterThan(1_000);
    const wait = (await durable.client.getRun(run.id)).waiting as { kind: string; until: Date; since: Date };
    expect(wait.kind).toBe('start');
    // The rest of the 30 s, after the slot fired, moved the run's instant on (not `since`): by what that real time took.
    expect(wait.until.getTime() - wait.since.getTime()).toBeGreaterThan(delay - elapsed - 100);
    expect(wait.until.getTime() - wait.since.getTime()).toBeLessThanOrEqual(delay + 1);
    expect(jitterOf('staggered', new Date('2026-06-01T10:01:00Z'), 59_999)).toBe(delay); // stable for the slot
    await durable.clock.advance(delay);
    expect((await durable.client.getRun(run.id)).status).toBe('completed');
    await durable.clock.advance('5m');
    expect(slotsOf(await runsOf(durable, 'staggered'), 'staggered')).toEqual(
      ['10:01', '10:02', '10:03', '10:04', '10:05', '10:06'].map((t) => `2026-06-01T${t}:00.000Z`),
    );
    expect(await skipsOf(durable, 'staggered')).toEqual([]);
  });

  it('a jitter past 32 bits of milliseconds (about 50 days) still spreads the delay up to it', () => {
    const jitterMs = 100 * 86_400_000; // 100 days
    const delays = Array.from({ length: 200 }, (_, i) => jitterOf('slow', new Date(Date.UTC(2026, 0, 1 + i)), jitterMs));
    expect(Math.max(...delays)).toBeGreaterThan(2 ** 32);
    expect(Math.max(...delays)).toBeLessThanOrEqual(jitterMs);
  });

  /** Downtime: schedules' time passes with no pass at all (every instance stopped), then one pass. */
  const downtime = async (durable: DurableTestingModule, ms: number) => {
    durable.get(DbClock).shiftMs += ms;
    await durable.drain();
  };

  it('a late pass leaves a jitter less of the gap: the delay counts from the pass, and the run still starts before the next slot', async () => {
    const durable = await create(new Date('2026-06-01T10:00:30Z'));
    await durable.schedules.create({ name: 'behind', workflow: Report, cron: '* * * * *', jitter: '10m' });
    await downtime(durable, 50_000); // the 10:01 slot's pass comes at 10:01:20: 40 s are left before 10:02
    // Its place in those 40 s, counted from the pass (cut to the gap from the slot, 60 s, its delay outlasted 10:02, whose slot was skipped).
    const [run] = await runsOf(durable, 'behind');
    const wait = (await durable.client.getRun(run.id)).waiting as { until: Date; since: Date };
    expect(wait.until.getTime() - wait.since.getTime()).toBeLessThanOrEqual(
      jitterOf('behind', new Date('2026-06-01T10:01:00Z'), 39_999) + 1,
    );
    await durable.clock.advance('2m');
    expect(slotsOf(await runsOf(durable, 'behind'), 'behind')).toEqual(['10:01', '10:02', '10:03'].map((t) => `2026-06-01T${t}:00.000Z`));
    expect(await skipsOf(durable, 'behind')).toEqual([]);
  });

  it("after downtime across 5 slots, catch-up 'latest' runs the latest slot inside the window and records the others as missed", async () => {
    const durable = await create(new Date('2026-06-01T10:00:30Z'));
    await durable.schedules.create({ name: 'latest', workflow: Report, cron: '* * * * *', catchupWindow: '3m' });
    await downtime(durable, 5 * MINUTE);
    expect(slotsOf(await runsOf(durable, 'latest'), 'latest')).toEqual(['2026-06-01T10:05:00.000Z']);
    expect(await skipsOf(durable, 'latest')).toEqual(
      ['10:01', '10:02', '10:03', '10:04'].map((t) => ({ slot: `2026-06-01T${t}:00.000Z`, reason: 'missed' })),
    );
  });

  it("after downtime across 5 slots, catch-up 'all' runs every slot inside the window and nothing older", async () => {
    const durable = await create(new Date('2026-06-01T10:00:30Z'));
    await durable.schedules.create({
      name: 'all',
      workflow: Report,
      cron: '* * * * *',
      catchupWindow: '3m',
      catchup: 'all',
      overlap: 'allow',
    });
    await downtime(durable, 5 * MINUTE);
    // now is 10:05:30: the window reaches back to 10:02:30.
    expect(slotsOf(await runsOf(durable, 'all'), 'all')).toEqual(['10:03', '10:04', '10:05'].map((t) => `2026-06-01T${t}:00.000Z`));
    expect(await skipsOf(durable, 'all')).toEqual(['10:01', '10:02'].map((t) => ({ slot: `2026-06-01T${t}:00.000Z`, reason: 'missed' })));
  });

  describe('overlap: a slot while the last run is unfinished', () => {
    const setUp = async (overlap: 'skip' | 'bufferOne' | 'allow' | 'cancelOther') => {
      const durable = await create(new Date('2026-06-01T10:00:30Z'));
      await durable.schedules.create({ name: overlap, workflow: LongJob, cron: '* * * * *', overlap });
      await durable.clock.advance('3m'); // slots 10:01, 10:02, 10:03; the first run waits for its signal
      return durable;
    };
    const slot = (t: string) => `2026-06-01T${t}:00.000Z`;
    const id = (name: string, t: string) => `schedule:${name}:${slot(t)}`;

    it("'skip' records each slot as skipped (overlap) while the run is unfinished", async () => {
      const durable = await setUp('skip');
      expect(slotsOf(await runsOf(durable, 'skip'), 'skip')).toEqual([slot('10:01')]);
      expect(await skipsOf(durable, 'skip')).toEqual([
        { slot: slot('10:02'), reason: 'overlap' },
        { slot: slot('10:03'), reason: 'overlap' },
      ]);
    });

    it("'bufferOne' keeps one slot waiting and starts it when the run ends; the others are skipped (overlap)", async () => {
      const durable = await setUp('bufferOne');
      expect(slotsOf(await runsOf(durable, 'bufferOne'), 'bufferOne')).toEqual([slot('10:01')]);
      expect(await skipsOf(durable, 'bufferOne')).toEqual([{ slot: slot('10:03'), reason: 'overlap' }]);
      await durable.signals.signal(id('bufferOne', '10:01'), Done, null);
      await durable.drain();
      // The schedule looks whether its run ended once a second (BUFFERED_LOOK_MS; schedule-decide.spec), not on every sweep.
      await durable.clock.advance('1s');
      expect(await runsOf(durable, 'bufferOne')).toEqual([
        expect.objectContaining({ id: id('bufferOne', '10:01'), status: 'completed' }),
        expect.objectContaining({ id: id('bufferOne', '10:02'), status: 'waiting' }),
      ]);
    });

    it("'allow' starts every slot's run anyway", async () => {
      const durable = await setUp('allow');
      expect(slotsOf(await runsOf(durable, 'allow'), 'allow')).toEqual([slot('10:01'), slot('10:02'), slot('10:03')]);
      expect(await skipsOf(durable, 'allow')).toEqual([]);
    });

    it("'cancelOther' cancels the unfinished run, then starts the new one", async () => {
      const durable = await setUp('cancelOther');
      expect(await runsOf(durable, 'cancelOther')).toEqual([
        expect.objectContaining({ id: id('cancelOther', '10:01'), status: 'cancelled' }),
        expect.objectContaining({ id: id('cancelOther', '10:02'), status: 'cancelled' }),
        expect.objectContaining({ id: id('cancelOther', '10:03'), status: 'waiting' }),
      ]);
    });
  });
});
