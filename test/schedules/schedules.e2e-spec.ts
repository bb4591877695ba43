import {
  defineSignal,
  DurableWorkflow,
  InvalidArgumentError,
  ScheduledInput,
  ScheduleNotFoundError,
  ScheduleOverlapError,
  ScheduleService,
  Workflow,
  WorkflowContext,
  WorkflowNotFoundError,
} from 'nestjs-durable';
import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { PARALLEL_TRANSACTIONS, SchedulePass, SLOTS_PER_TRANSACTION } from 'nestjs-durable/worker/schedule-pass';
import { serializePayload } from 'nestjs-durable/schema/serializer';
import { jitterOf } from 'nestjs-durable/schema/schedule-spec';
import { Client } from 'pg';
import { databaseUrl, Db, DurableTestApp, eventually, repeatableReadRole, startApp, uniqueSchema } from '../setup/durable-app';
import { StatementGate } from '../setup/statement-gate';

@Workflow('tick', { schedules: [{ name: 'every-second', cron: '* * * * * *', overlap: 'allow', input: { source: 'cron' } }] })
class Tick implements DurableWorkflow<ScheduledInput & { source: string }, string> {
  async run(input: ScheduledInput & { source: string }) {
    return `${input.source}@${input.scheduledAt.toISOString()}`;
  }
}

@Workflow('nightly', { schedules: [{ name: 'nightly', cron: '0 3 * * *', timezone: 'Europe/Paris' }] })
class Nightly implements DurableWorkflow<ScheduledInput, string> {
  async run(input: ScheduledInput) {
    return input.scheduledAt.toISOString();
  }
}

const Release = defineSignal<null>('release');
/** A schedule whose runs wait for a signal: its last run stays unfinished for as long as a test needs. */
@Workflow('held', { signals: [Release], schedules: [{ name: 'held', cron: '0 3 1 1 *' }] })
class Held implements DurableWorkflow<ScheduledInput, null> {
  async run(_: ScheduledInput, ctx: WorkflowContext) {
    await ctx.waitForSignal(Release);
    return null;
  }
}

const declaring = (name: string, spec: Record<string, unknown>) => {
  @Workflow(name, { schedules: [spec as never] })
  class Declared implements DurableWorkflow<ScheduledInput, null> {
    async run() {
      return null;
    }
  }
  return Declared;
};

/** What a schedule has started, and the slots it recorded missed: compared before and after a catch-up. */
async function slotsOf(db: Db, name: string): Promise<{ runs: number; missed: number }> {
  return {
    runs: await db.count('runs', `starts_with(id, $1)`, [`schedule:${name}:`]),
    missed: await db.count('schedule_skips', `schedule = $1 AND reason = 'missed'`, [name]),
  };
}

/**
 * A flagged per-second schedule is held as through downtime: its pass leaves it due never, and while two
 * seconds of the database's time pass it starts no run and records no skipped slot. Answers what it had.
 */
async function heldThroughSlots(db: Db, name: string): Promise<{ runs: number; missed: number }> {
  await eventually(async () => (await db.count('schedules', `name = $1 AND next_fire_at IS NULL`, [name])) === 1, `${name} held`);
  const before = { ...(await slotsOf(db, name)), skipped: await db.count('schedule_skips', `schedule = $1`, [name]) };
  const [{ at }] = await db.query<{ at: Date }>(`SELECT now() AS at`);
  await eventually(
    async () => (await db.query<{ past: boolean }>(`SELECT now() > $1::timestamptz + interval '2 seconds' AS past`, [at]))[0].past,
    'two of its slots to pass',
  );
  expect({ ...(await slotsOf(db, name)), skipped: await db.count('schedule_skips', `schedule = $1`, [name]) }).toEqual(before);
  return before;
}

/** Its workflow back, a held schedule catches up by its policy ('latest' within its window): its newest slot starts, the others are missed. */
async function caughtUp(db: Db, name: string, held: { runs: number; missed: number }): Promise<void> {
  await eventually(async () => {
    const now = await slotsOf(db, name);
    return now.runs > held.runs && now.missed > held.missed;
  }, `${name} caught up`);
}

describe('schedules across instances and restarts', () => {
  /** Each test's schema and the one connection that looks at it (ended with the schema's drop). */
  const dbs = new Map<string, Db>();
  const fresh = () => {
    const schema = uniqueSchema('sch');
    dbs.set(schema, new Db(schema));
    return schema;
  };
  const dbOf = (schema: string) => dbs.get(schema)!;
  afterAll(async () => {
    for (const db of dbs.values()) await db.dropSchema();
  });

  it('three instances on one database: a per-second schedule starts exactly one run per slot, without gaps, ids and scheduledAt as specified', async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const apps = await Promise.all([0, 1, 2].map(() => startApp({ schema, providers: [Tick] })));
    try {
      await eventually(async () => (await db.count('runs', `status = 'completed'`)) >= 12, '12 slots fired', 30_000);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
    }
    const runs = await db.query<{ id: string; output: string }>(
      `SELECT id, output FROM durable.runs WHERE status = 'completed' ORDER BY id`,
    );
    const slots = runs.map((r) => Date.parse(r.id.slice('schedule:every-second:'.length)));
    for (const [i, run] of runs.entries()) {
      expect(run.id).toBe(`schedule:every-second:${new Date(slots[i]).toISOString()}`);
      expect(JSON.parse(run.output)).toBe(`cron@${new Date(slots[i]).toISOString()}`);
      if (i > 0) expect(slots[i] - slots[i - 1]).toBe(1_000);
    }
    expect(await db.count('schedule_skips')).toBe(0);
    expect(await db.count('runs')).toBe(await db.count('runs', `starts_with(id, 'schedule:every-second:')`));
  });

  it("a jittered slot's run begins at its delayed instant, not at the next sweep after it (a 30 s sweep interval)", async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Nightly], options: { sweeper: { intervalMs: 30_000 } } });
    try {
      await app.get(ScheduleService).create({ name: 'jittered', workflow: Nightly, cron: '*/5 * * * * *', jitter: '4s' });
      const [run] = await eventually(
        async () => {
          const rows = await db.query<{ id: string; created: number; began: number }>(
            `SELECT id, extract(epoch FROM created_at) * 1000 AS created, extract(epoch FROM began_at) * 1000 AS began
             FROM durable.runs WHERE starts_with(id, 'schedule:jittered:') AND began_at IS NOT NULL ORDER BY id LIMIT 1`,
          );
          return rows.length ? rows : null;
        },
        "the first slot's run to begin",
        15_000,
      );
      const delay = jitterOf('jittered', new Date(run.id.slice('schedule:jittered:'.length)), 4_000);
      // Left to the sweeps, it began with the next slot's (aimed at it, 5 s after its slot): at least a second late.
      expect(Number(run.began) - (Number(run.created) + delay)).toBeLessThan(900);
    } finally {
      await app.close();
    }
  });

  it('a slot fires at its instant, not at the next sweep: with a 30 s sweep interval a per-second schedule still starts its runs', async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Tick], options: { sweeper: { intervalMs: 30_000 } } });
    try {
      // Without the sweep aimed at the next slot, nothing would fire before the interval's first tick, 30 s on.
      await eventually(async () => (await db.count('runs', `status = 'completed'`)) >= 3, 'three slots fired', 15_000);
      const [{ late }] = await db.query<{ late: number }>(
        `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM created_at - substr(id, 23)::timestamptz)) AS late
         FROM durable.runs`,
      );
      expect(late).toBeLessThan(5);
    } finally {
      await app.close();
    }
  });

  it('a slot another instance holds mid-fire is looked at again shortly, not an interval later: fired once the hold ends', async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Tick], options: { sweeper: { intervalMs: 30_000 } } });
    const holder = new Client(databaseUrl());
    await holder.connect();
    try {
      await eventually(async () => (await db.count('runs')) >= 1, 'a first slot fired');
      // Held as an instance firing it holds it: this instance's passes find it due and SKIP LOCKED passes it by.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".schedules WHERE name = 'every-second' FOR UPDATE`);
      const [{ due }] = await holder.query<{ due: Date }>(`SELECT next_fire_at AS due FROM "${schema}".schedules`).then((r) => r.rows);
      await eventually(
        async () => (await db.query(`SELECT now() > $1::timestamptz + interval '1.5 seconds' AS past`, [due]))[0].past,
        'the held slot overdue by more than a second (its aimed sweep came and went)',
      );
      const before = await db.count('runs');
      await holder.query('ROLLBACK');
      await eventually(async () => (await db.count('runs')) > before, 'the held slot fired after the hold', 10_000);
    } finally {
      await holder.end();
      await app.close();
    }
  });

  it('a schedule created while a pass is in flight is fired by a pass after that one, not an interval later', async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Held], options: { sweeper: { intervalMs: 30_000 } } });
    // The next pass reads the schedules, then is kept in flight until the test lets it answer.
    const pass = app.get(SchedulePass);
    const read = pass.run.bind(pass);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let passRead!: () => void;
    const hasRead = new Promise<void>((resolve) => (passRead = resolve));
    pass.run = async () => {
      const result = await read();
      passRead();
      await answered;
      return result;
    };
    try {
      const schedules = app.get(ScheduleService);
      await schedules.create({ name: 'yearly-held', workflow: Held, cron: '0 3 1 1 *' }); // its sweep's pass
      await hasRead;
      await schedules.create({ name: 'every-second-held', workflow: Held, cron: '* * * * * *', overlap: 'allow' });
      answer();
      // Before: the pass in flight, which had read no such schedule, aimed at none, and the create's sweep was dropped.
      await eventually(
        async () => (await db.count('runs', `starts_with(id, 'schedule:every-second-held:')`)) > 0,
        'a first slot fired',
        10_000,
      );
    } finally {
      answer();
      await app.close();
    }
  });

  it("an operator's pause survives a restart (the decorator does not override it), and a paused schedule's slots are recorded as 'paused'", async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const first = await startApp({ schema, providers: [Tick] });
    await first.get(ScheduleService).pause('every-second', { actor: 'ops' });
    await first.close();
    const second = await startApp({ schema, providers: [Tick] });
    try {
      expect((await second.get(ScheduleService).get('every-second')).paused).toBe(true);
      await eventually(async () => (await db.count('schedule_skips', `reason = 'paused'`)) >= 2, 'paused slots recorded');
      const runsWhilePaused = await db.count('runs');
      await second.get(ScheduleService).resume('every-second', { actor: 'ops' });
      await eventually(async () => (await db.count('runs')) > runsWhilePaused, 'a run after resume');
      expect(await db.query(`SELECT event, actor FROM durable.history WHERE run_id = 'schedule:every-second' ORDER BY id`)).toEqual([
        { event: 'schedule-paused', actor: 'ops' },
        { event: 'schedule-resumed', actor: 'ops' },
      ]);
    } finally {
      await second.close();
    }
  });

  it("reconciling at boot: a changed spec is updated; a schedule whose workflow no instance executes (a decorator's or a create()-made one) is kept, held and flagged, and catches up and fires again once it is back", async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const first = await startApp({ schema, providers: [Nightly] });
    await first.get(ScheduleService).create({ name: 'made', workflow: Nightly, cron: '* * * * * *', overlap: 'allow' });
    await first.close();
    const Changed = declaring('nightly', { name: 'nightly', cron: '0 4 * * *', timezone: 'Europe/Paris', overlap: 'allow' });
    const second = await startApp({ schema, providers: [Changed] });
    expect(await second.get(ScheduleService).get('nightly')).toMatchObject({
      cron: '0 4 * * *',
      overlap: 'allow',
      source: 'decorator',
      paused: false,
    });
    await second.close();
    // A mixed fleet (a rollout under way): an instance without the workflow boots while a live one executes
    // it, and flags nothing; the live one's heartbeat names what it executes, and its shutdown withdraws that.
    const keeper = await startApp({ schema, providers: [Changed] });
    await eventually(async () => (await db.count('instances', `detail -> 'workflows' ? 'nightly'`)) === 1, "the keeper's heartbeat");
    const old = await startApp({ schema, providers: [Tick] });
    try {
      expect(await old.get(ScheduleService).get('nightly')).toMatchObject({ paused: false, workflowMissing: false });
      expect(await old.get(ScheduleService).get('made')).toMatchObject({ paused: false, workflowMissing: false });
    } finally {
      // A renewal in flight as the keeper shuts down must not name its workflows again after its shutdown withdrew them.
      void keeper.get(DurableWorker).renew();
      await Promise.all([old.close(), keeper.close()]);
    }
    expect(await db.count('instances', `detail -> 'workflows' ? 'nightly'`)).toBe(0);
    const third = await startApp({ schema, providers: [Tick] });
    let held: { runs: number; missed: number };
    try {
      expect(await third.get(ScheduleService).get('nightly')).toMatchObject({ cron: '0 4 * * *', paused: true, workflowMissing: true });
      // The create()-made one too: held, where each slot inserted a run no instance here would claim.
      expect(await third.get(ScheduleService).get('made')).toMatchObject({
        source: 'api',
        paused: true,
        workflowMissing: true,
        operatorPaused: false,
      });
      held = await heldThroughSlots(db, 'made');
      // Its last slot stays where the hold began; the next fire times it lists are still to come.
      const [{ now }] = await db.query<{ now: Date }>(`SELECT now()`);
      const { nextFireTimes } = await third.get(ScheduleService).get('made');
      expect(nextFireTimes).toHaveLength(5);
      expect(nextFireTimes[0].getTime()).toBeGreaterThan(now.getTime() - 1_000);
    } finally {
      await third.close();
    }
    // The workflow back (a rollback, an old instance restarted mid-rollout): the flag clears, the schedule catches up and fires again.
    const fourth = await startApp({ schema, providers: [Changed] });
    try {
      expect(await fourth.get(ScheduleService).get('nightly')).toMatchObject({ paused: false, workflowMissing: false });
      expect(await fourth.get(ScheduleService).get('made')).toMatchObject({ paused: false, workflowMissing: false });
      await caughtUp(db, 'made', held);
      // An operator's pause is the operator's: kept through the workflow going and coming back.
      await fourth.get(ScheduleService).pause('nightly');
    } finally {
      await fourth.close();
    }
    await (await startApp({ schema, providers: [Tick] })).close();
    const sixth = await startApp({ schema, providers: [Changed] });
    try {
      expect(await sixth.get(ScheduleService).get('nightly')).toMatchObject({ paused: true, workflowMissing: false, operatorPaused: true });
    } finally {
      await sixth.close();
    }
  });

  it('a rollout that removes a workflow while other instances run: once the last instance executing it leaves, a live one flags its schedules within a lease, without a boot, and holds them; one back catches them up, not one without a worker; a wrong flag clears while one executes it', async () => {
    const schema = fresh();
    const db = dbOf(schema);
    // A short lease: each sweeper decides workflowMissing again once a lease.
    const options = { leaseMs: 2_000 };
    const keeper = await startApp({ schema, providers: [Nightly], options });
    await keeper.get(ScheduleService).create({ name: 'made', workflow: Nightly, cron: '* * * * * *', overlap: 'allow' });
    const other = await startApp({ schema, providers: [Held], options });
    let back: DurableTestApp | undefined;
    const schedules = other.get(ScheduleService);
    try {
      await eventually(
        async () => (await db.count('runs', `id LIKE 'schedule:made:%' AND status = 'completed'`)) >= 1,
        'a slot of made run by the keeper',
      );
      // A flag left wrong (set while the keeper's heartbeat was late, say) clears while the keeper executes the workflow.
      await db.query(`UPDATE durable.schedules SET workflow_missing = true WHERE name = 'made'`);
      const beforeClear = await slotsOf(db, 'made');
      await eventually(async () => !(await schedules.get('made')).workflowMissing, 'the wrong flag cleared');
      await eventually(async () => (await slotsOf(db, 'made')).runs > beforeClear.runs, 'made firing again');

      await keeper.close();
      // No instance boots: the one left flags both schedules of the workflow that left with the keeper.
      for (const name of ['made', 'nightly'])
        await eventually(async () => (await schedules.get(name)).workflowMissing, `${name} flagged by the live instance`);
      expect(await schedules.get('held')).toMatchObject({ workflowMissing: false });
      const held = await heldThroughSlots(db, 'made');
      // An instance that registers the workflow but executes nothing (no worker) boots: the flag stays.
      await (await startApp({ schema, providers: [Nightly], options: { ...options, worker: { enabled: false } } })).close();
      expect(await schedules.get('made')).toMatchObject({ workflowMissing: true });
      back = await startApp({ schema, providers: [Nightly], options });
      await caughtUp(db, 'made', held);
    } finally {
      await Promise.all([keeper.close(), other.close(), back?.close()]);
    }
  });

  it('trigger starts one run now outside the slots, with its actor; backfill starts each slot once and is bounded', async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Nightly] });
    try {
      const schedules = app.get(ScheduleService);
      const handle = await schedules.trigger('nightly', { actor: 'ops' });
      expect(handle.runId).toMatch(/^schedule:nightly:trigger:[0-9a-f-]{36}$/);
      expect(await handle.result()).toEqual(expect.any(String));
      expect(await db.query(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = 'started'`, [handle.runId])).toEqual([
        { actor: 'ops' },
      ]);
      expect((await schedules.get('nightly')).lastRun).toMatchObject({ runId: handle.runId, status: 'completed' });

      const from = new Date('2026-01-01T00:00:00Z');
      const to = new Date('2026-01-10T00:00:00Z');
      expect(await schedules.backfillPreview('nightly', from, to)).toMatchObject({ slots: 9, started: 9, skipped: 0 });
      expect(await db.count('runs', `id LIKE 'schedule:nightly:2026-01-0%'`)).toBe(0); // a preview starts nothing
      expect(await schedules.backfill('nightly', from, to, { actor: 'ops' })).toEqual({ started: 9, skipped: 0 });
      expect(await schedules.backfill('nightly', from, to)).toEqual({ started: 0, skipped: 9 });
      await eventually(async () => (await db.count('runs', `status = 'completed'`)) === 10, 'the backfilled runs');
      expect(await db.count('runs', `id = 'schedule:nightly:2026-01-01T02:00:00.000Z'`)).toBe(1); // 03:00 Paris in winter
      expect(await schedules.backfillPreview('nightly', from, to)).toMatchObject({ slots: 9, started: 0, skipped: 9 }); // all ran already

      const before = await db.count('runs');
      await expect(schedules.backfill('nightly', new Date('2000-01-01T00:00:00Z'), new Date('2030-01-01T00:00:00Z'))).rejects.toThrow(
        /covers more than 10000 slots; split the range/,
      );
      await expect(schedules.backfill('nightly', to, from)).rejects.toThrow(/must not be after to/);
      // A slot still to come is the schedule's to fire: a range reaching one starts nothing.
      const tomorrow = new Date(Date.now() + 86_400_000);
      await expect(schedules.backfill('nightly', from, tomorrow)).rejects.toThrow(/which is still to come .*; backfill past slots only/);
      await expect(schedules.backfillPreview('nightly', from, tomorrow)).rejects.toThrow(InvalidArgumentError);
      expect(await db.count('runs')).toBe(before);
      // Both ends are included: a range of one instant backfills its slot.
      const slot = new Date('2026-01-12T02:00:00Z');
      expect(await schedules.backfill('nightly', slot, slot)).toEqual({ started: 1, skipped: 0 });
      expect(await db.count('runs', `id = 'schedule:nightly:2026-01-12T02:00:00.000Z'`)).toBe(1);
      await expect(schedules.trigger('no-such')).rejects.toThrow(ScheduleNotFoundError);
      await expect(schedules.get('no-such')).rejects.toMatchObject({ code: 'SCHEDULE_NOT_FOUND' });
    } finally {
      await app.close();
    }
  });

  it("trigger follows the overlap policy against an unfinished last run: 'skip' refuses naming it and writes nothing, 'allow' starts beside it, 'cancelOther' cancels it; an override meant for another run (expectLastRun) is refused", async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Held] });
    const holder = new Client(databaseUrl());
    await holder.connect();
    try {
      const schedules = app.get(ScheduleService);
      const first = await schedules.trigger('held', { actor: 'ops' });
      await eventually(async () => (await app.client.getRun(first.runId)).status === 'waiting', 'the first run waiting');

      const runs = await db.count('runs');
      const refused = schedules.trigger('held');
      await expect(refused).rejects.toThrow(ScheduleOverlapError);
      await expect(refused).rejects.toThrow(
        `Schedule "held" has an unfinished run "${first.runId}" (waiting) and the overlap policy "skip"`,
      );
      await expect(schedules.trigger('held', { overlap: 'bufferOne' })).rejects.toMatchObject({ code: 'SCHEDULE_OVERLAP' });
      await expect(schedules.trigger('held', { overlap: 'sometimes' as never })).rejects.toThrow(
        /trigger\("held"\): overlap must be one of skip, bufferOne, allow, cancelOther; got "sometimes"/,
      );
      expect(await db.count('runs')).toBe(runs);
      expect((await schedules.get('held')).lastRun?.runId).toBe(first.runId);

      const beside = await schedules.trigger('held', { overlap: 'allow' });
      await eventually(async () => (await app.client.getRun(beside.runId)).status === 'waiting', 'the run beside it waiting');
      expect((await app.client.getRun(first.runId)).status).toBe('waiting');
      expect((await schedules.get('held')).lastRun?.runId).toBe(beside.runId);

      // An override meant for the run the caller saw (the first) is refused now that another is the last: nothing cancelled.
      const stale = schedules.trigger('held', { overlap: 'cancelOther', expectLastRun: first.runId });
      await expect(stale).rejects.toMatchObject({
        code: 'SCHEDULE_OVERLAP',
        runId: beside.runId,
        details: { runId: beside.runId, status: 'waiting', overlap: 'cancelOther', expected: first.runId },
      });
      await expect(stale).rejects.toThrow(
        `unfinished last run is "${beside.runId}" (waiting), not "${first.runId}" as the trigger expected`,
      );
      for (const bad of ['', 42])
        await expect(schedules.trigger('held', { overlap: 'cancelOther', expectLastRun: bad as never })).rejects.toThrow(
          /trigger\("held"\): expectLastRun must be a run id \(a non-empty string\)/,
        );
      expect(await db.count('runs')).toBe(runs + 1);
      expect(await db.count('runs', `status = 'waiting'`)).toBe(2);

      const replacing = await schedules.trigger('held', { overlap: 'cancelOther', actor: 'ops', expectLastRun: beside.runId });
      expect((await app.client.getRun(beside.runId)).status).toBe('cancelled');
      expect(await db.query(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = 'cancelled'`, [beside.runId])).toEqual([
        { actor: 'ops' },
      ]);
      expect(await db.query(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = 'started'`, [replacing.runId])).toEqual([
        { actor: 'ops' },
      ]);
      await eventually(async () => (await app.client.getRun(replacing.runId)).status === 'waiting', 'the replacing run waiting');

      // A trigger waits for a pass that holds the schedule, then reads the last run that pass left: here one
      // unfinished (the first), which it refuses, where the stored one it would have read before the wait had ended.
      await app.signals.signal(replacing.runId, Release, null);
      await replacing.result();
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".schedules WHERE name = 'held' FOR UPDATE`);
      const waiting = schedules.trigger('held').then(
        () => 'started',
        (error: Error) => error,
      );
      await eventually(
        async () =>
          (
            await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [
              `%"${schema}"."schedules"%FOR UPDATE%`,
            ])
          ).length > 0,
        'the trigger waiting for the schedule',
      );
      await holder.query(`UPDATE "${schema}".schedules SET last_run_id = $1 WHERE name = 'held'`, [first.runId]);
      await holder.query('COMMIT');
      expect(await waiting).toMatchObject({ code: 'SCHEDULE_OVERLAP', runId: first.runId });
    } finally {
      await holder.end();
      await app.close();
    }
  });

  it("a cancelOther stops the cancelled run's execution here at once, from a trigger and from a slot, not at its next renewal", async () => {
    /** The runs executing, each held until the test opens its gate. */
    const gates = new Map<string, () => void>();
    @Workflow('gated', { schedules: [{ name: 'gated-every-second', cron: '* * * * * *', overlap: 'cancelOther' }] })
    class Gated implements DurableWorkflow<ScheduledInput, null> {
      async run(_: ScheduledInput, ctx: WorkflowContext) {
        await new Promise<void>((open) => gates.set(ctx.runId, open));
        return null;
      }
    }
    const schema = fresh();
    const db = dbOf(schema);
    // Leases renewed every 20 s: within the test, a renewal never tells an execution its run was cancelled.
    const app = await startApp({ schema, providers: [Gated], options: { leaseMs: 60_000 } });
    const worker = app.get(DurableWorker);
    const schedules = app.get(ScheduleService);
    const cancelled = (runId: string) => db.count('runs', `id = $1 AND status = 'cancelled'`, [runId]);
    try {
      // A slot's pass cancels the run of the slot before, executing here.
      const bySlot = await eventually(async () => [...gates.keys()].find((id) => !id.includes(':trigger:')), 'a slot run executing');
      await eventually(async () => (await cancelled(bySlot)) === 1, 'the next slot cancelling it');
      await eventually(async () => !worker.isExecuting(bySlot), 'its execution stopping', 3_000);

      await schedules.pause('gated-every-second');
      const last = (await schedules.get('gated-every-second')).lastRun!.runId;
      await eventually(async () => gates.has(last), 'the last slot run executing');
      const replacing = await schedules.trigger('gated-every-second');
      expect(await cancelled(last)).toBe(1);
      expect(worker.isExecuting(last)).toBe(false);
      await eventually(async () => gates.has(replacing.runId), 'the triggered run executing');
    } finally {
      for (const open of gates.values()) open();
      await app.close();
    }
  });

  it("a queued workflow's scheduled runs enter its queue: slots, trigger and backfill wait for admission and keep its concurrency", async () => {
    /** When each execution ran, by the process clock: the queue's one slot means no two of these overlap. */
    const executions: Array<{ from: number; to: number }> = [];
    @Workflow('queued-tick', { queue: 'one', schedules: [{ name: 'queued-every-second', cron: '* * * * * *', overlap: 'allow' }] })
    class QueuedTick implements DurableWorkflow<ScheduledInput, null> {
      async run() {
        const from = performance.now();
        await new Promise((resolve) => setTimeout(resolve, 150));
        executions.push({ from, to: performance.now() });
        return null;
      }
    }
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [QueuedTick], options: { queues: { one: { concurrency: 1 } } } });
    try {
      const schedules = app.get(ScheduleService);
      await schedules.trigger('queued-every-second');
      await schedules.backfill('queued-every-second', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:04Z'));
      await eventually(async () => (await db.count('runs', `status = 'completed'`)) >= 8, 'slots, trigger and backfill ran', 30_000);
    } finally {
      await app.close();
    }
    // Every run went through the queue, and none executed while another did. (The rows' began_at and
    // updated_at cannot say so: each is its transaction's start, which can precede the commit that freed the slot.)
    expect(await db.count('runs', `queue IS DISTINCT FROM 'one'`)).toBe(0);
    const sorted = [...executions].sort((a, b) => a.from - b.from);
    expect(sorted.filter((e, i) => i > 0 && e.from < sorted[i - 1].to)).toEqual([]);
    expect(sorted.length).toBeGreaterThanOrEqual(8);
  });

  it("an instance fires only the schedules of the workflows it registers: one without the workflow (a fleet mid-rollout) starts none of its slots, so none enters without the workflow's queue and timeout; with no sweeping instance registering it, the schedule is flagged", async () => {
    @Workflow('timed-tick', { queue: 'ticks', timeout: '1h' })
    class TimedTick implements DurableWorkflow<ScheduledInput, null> {
      async run() {
        return null;
      }
    }
    const schema = fresh();
    const db = dbOf(schema);
    const options = { queues: { ticks: { concurrency: 4 } } };
    // The workflow's instance executes it but sweeps nothing; the other one sweeps, its own per-second schedule showing its passes.
    const executor = await startApp({ schema, providers: [TimedTick], options: { ...options, sweeper: false } });
    const sweeping = await startApp({ schema, providers: [Tick] });
    let second: DurableTestApp | undefined;
    try {
      await executor.get(ScheduleService).create({ name: 'timed', workflow: TimedTick, cron: '* * * * * *', overlap: 'allow' });
      const [{ at }] = await db.query<{ at: Date }>(`SELECT now() AS at`);
      await eventually(
        async () =>
          (await db.count('runs', `starts_with(id, 'schedule:every-second:') AND created_at > $1::timestamptz + interval '2 seconds'`, [
            at,
          ])) > 0,
        'two seconds of passes by the other instance',
      );
      expect(await db.count('runs', `workflow = 'timed-tick'`)).toBe(0);
      // No instance fires it: the executor's heartbeat says it does not sweep. So it is held, flagged, not left due for ever.
      await eventually(async () => (await executor.get(ScheduleService).get('timed')).workflowMissing, 'the schedule flagged');
      // A backfill (and its preview) there is refused alike, naming the workflow, and starts nothing.
      const range = [new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:02Z')] as const;
      await expect(sweeping.get(ScheduleService).backfill('timed', ...range)).rejects.toThrow(WorkflowNotFoundError);
      await expect(sweeping.get(ScheduleService).backfillPreview('timed', ...range)).rejects.toThrow(/timed-tick/);
      expect(await db.count('runs', `workflow = 'timed-tick'`)).toBe(0);
      // An instance that registers it and sweeps fires its slots, each run in the workflow's queue with its timeout.
      second = await startApp({ schema, providers: [TimedTick], options });
      await eventually(async () => (await db.count('runs', `workflow = 'timed-tick' AND status = 'completed'`)) >= 2, 'its slots fired');
    } finally {
      await Promise.all([executor.close(), sweeping.close(), second?.close()]);
    }
    expect(
      await db.count('runs', `workflow = 'timed-tick' AND (queue IS DISTINCT FROM 'ticks' OR timeout_ms IS DISTINCT FROM 3600000)`),
    ).toBe(0);
  });

  it('a pass reads a schedule after locking it: a trigger that committed while the locking statement was under way is the last run its overlap sees', async () => {
    const Go = defineSignal<null>('go');
    /** Slots end at once; a triggered run waits, unfinished for as long as the test needs. */
    @Workflow('gated', { signals: [Go] })
    class Gated implements DurableWorkflow<ScheduledInput, null> {
      async run(_: ScheduledInput, ctx: WorkflowContext) {
        if (ctx.runId.includes(':trigger:')) await ctx.waitForSignal(Go);
        return null;
      }
    }
    const schema = fresh();
    const db = dbOf(schema);
    // The statement that locks the due schedules (the pass's only one with SKIP LOCKED) is held at a gate after its
    // snapshot is taken and before it locks the row.
    const gate = await StatementGate.open(db);
    const app = await startApp({ schema, providers: [Gated], options: { connection: gate.url } });
    try {
      await gate.install('schedules', ['SKIP LOCKED']);
      const schedules = app.get(ScheduleService);
      await schedules.create({ name: 'gated', workflow: Gated, cron: '* * * * * *', overlap: 'skip' });
      await eventually(
        async () => (await db.count('runs', `starts_with(id, 'schedule:gated:') AND status = 'completed'`)) > 0,
        'a slot ran',
      );
      await gate.hold();
      await gate.held('a pass held in its locking statement');
      // No other pass runs meanwhile (one at a time per instance): the slots' runs stay as they are.
      const slotRuns = `starts_with(id, 'schedule:gated:') AND id NOT LIKE '%:trigger:%'`;
      const before = await db.count('runs', slotRuns);
      const triggered = await schedules.trigger('gated', { overlap: 'allow' });
      await gate.release();
      const trigger = [triggered.runId];
      await eventually(
        async () =>
          (await db.count('schedules', `name = 'gated' AND last_slot > (SELECT created_at FROM durable.runs WHERE id = $1)`, trigger)) > 0,
        'a slot after the trigger handled',
      );
      // The held pass's slot, and those after it, are skipped: the triggered run is unfinished.
      expect(await db.count('runs', slotRuns)).toBe(before);
      expect(
        await db.count(
          'schedule_skips',
          `schedule = 'gated' AND reason = 'overlap' AND slot > (SELECT created_at FROM durable.runs WHERE id = $1)`,
          trigger,
        ),
      ).toBeGreaterThan(0);
      expect(await db.count('runs', `id = $1 AND status IN ('pending', 'running', 'waiting')`, [triggered.runId])).toBe(1);
    } finally {
      await app.close();
      await gate.close(); // the schema with the role: the instance made it as the role
    }
  });

  it('an invalid cron, an unknown timezone or two schedules with one name fail the boot naming the schedule, and nothing is written', async () => {
    const cases: Array<[unknown[], RegExp]> = [
      [[declaring('bad-cron', { name: 'bad-cron', cron: '61 * * * *' })], /Schedule "bad-cron": cron "61 \* \* \* \*" is invalid/],
      [
        [declaring('bad-zone', { name: 'bad-zone', cron: '0 9 * * *', timezone: 'Mars/Olympus' })],
        /Schedule "bad-zone": timezone "Mars\/Olympus" is not an IANA time zone/,
      ],
      [
        [declaring('one', { name: 'twin', cron: '0 9 * * *' }), declaring('two', { name: 'twin', cron: '0 10 * * *' })],
        /Two schedules are named "twin" \(workflows "one" and "two"\)/,
      ],
      [
        [declaring('bad-window', { name: 'bad-window', cron: '0 9 * * *', catchupWindow: 'soon' })],
        /Schedule "bad-window": catchupWindow "soon" is not a duration/,
      ],
      [
        [declaring('bad-overlap', { name: 'bad-overlap', cron: '0 9 * * *', overlap: 'queue' })],
        /Schedule "bad-overlap": overlap must be one of skip, bufferOne, allow, cancelOther/,
      ],
    ];
    for (const [providers, message] of cases) {
      const schema = fresh();
      await expect(startApp({ schema, providers: providers as never[] })).rejects.toThrow(message);
      expect(
        await dbOf(schema)
          .count('schedules')
          .catch(() => 0),
      ).toBe(0);
    }
    const schema = fresh();
    const app = await startApp({ schema, providers: [Nightly] });
    try {
      const schedules = app.get(ScheduleService);
      await expect(schedules.create({ name: 'x', workflow: Nightly, cron: 'every day' })).rejects.toThrow(InvalidArgumentError);
      await expect(schedules.create({ name: 'x', workflow: Nightly, cron: '0 9 * * *', timezone: 'Nowhere' })).rejects.toThrow(
        /Schedule "x": timezone/,
      );
      await expect(schedules.create({ name: 'nightly', workflow: Nightly, cron: '0 9 * * *' })).rejects.toThrow(
        /Schedule "nightly" exists already/,
      );
      await expect(schedules.create({ name: 'x', workflow: Nightly, cron: '0 0 30 2 *' })).rejects.toThrow(
        /Schedule "x": cron "0 0 30 2 \*" matches no date from now on/,
      );
      // Fits alone, not with the scheduledAt every slot's run adds: it would fail every pass.
      const input = { blob: 'x'.repeat(4 * 1024 * 1024 - 40) };
      await expect(schedules.create({ name: 'x', workflow: Nightly, cron: '0 9 * * *', input })).rejects.toThrow(
        /Schedule "x": input cannot be stored/,
      );
      // Text Postgres cannot store (a NUL; a lone surrogate, stored as U+FFFD under another name) is refused by name;
      // so are . and .., which HTTP clients take out of the schedule's REST address.
      for (const name of ['nul\u0000', 'lone\ud800'])
        await expect(schedules.create({ name, workflow: Nightly, cron: '0 9 * * *' })).rejects.toThrow(/NUL or lone surrogates/);
      for (const name of ['.', '..'])
        await expect(schedules.create({ name, workflow: Nightly, cron: '0 9 * * *' })).rejects.toThrow(/and not \. or \.\./);
      await schedules.create({ name: 'made', workflow: Nightly, cron: '0 3 * * *', timezone: 'Europe/Paris' });
      await expect(schedules.update('made', { input })).rejects.toThrow(/Schedule "made": input cannot be stored/);
      // update(): paused is pause()'s and resume()'s; a field given as undefined keeps its value.
      await expect(schedules.update('made', { paused: true })).rejects.toThrow(/call pause\(\) or resume\(\)/);
      const before = await schedules.get('made');
      await schedules.update('made', { cron: '0 10 * * *', timezone: undefined, overlap: undefined });
      const after = await schedules.get('made');
      expect(after).toMatchObject({ cron: '0 10 * * *', timezone: before.timezone, overlap: before.overlap, paused: before.paused });
      // A misspelt field ('timeZone' for timezone) would be ignored, its default taken without a word.
      await expect(
        schedules.create({ name: 'x', workflow: Nightly, cron: '0 9 * * *', timeZone: 'Europe/Paris' } as never),
      ).rejects.toThrow(
        /Schedule "x": unknown option timeZone; it takes name, cron, timezone, overlap, catchupWindow, catchup, input, jitter, paused/,
      );
      await expect(schedules.update('made', { catchUpWindow: '1h' } as never)).rejects.toThrow(
        /Schedule "made": unknown option catchUpWindow/,
      );
      await expect(schedules.update('made', { workflow: 'other' } as never)).rejects.toThrow(/Schedule "made": unknown option workflow/);
      // null is not a field left out: { timezone: null } moved the schedule to UTC (and its slots to count from now).
      for (const field of ['timezone', 'overlap', 'catchupWindow', 'catchup', 'input'])
        await expect(schedules.update('made', { [field]: null })).rejects.toThrow(
          new RegExp(`Schedule "made": ${field} is null; leave it out for its default`),
        );
      // A window shorter than a pass may be late records slots as missed with no downtime at all.
      await expect(schedules.update('made', { catchupWindow: '50ms' })).rejects.toThrow(
        /Schedule "made": catchupWindow must be at least 10s; got 50 ms/,
      );
      await expect(schedules.create({ name: 'x', workflow: Nightly, cron: '0 9 * * *', catchupWindow: 1 })).rejects.toThrow(
        /catchupWindow must be at least 10s/,
      );
      expect(await schedules.get('made')).toEqual(after);
      expect((await schedules.list()).map((s) => s.name)).toEqual(['made', 'nightly']);
    } finally {
      await app.close();
    }
  });

  it("a boot whose reconcile waits for another instance's reconcile sees the schedules it wrote, on a database whose default isolation is repeatable read", async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const role = await repeatableReadRole(`${schema}_rr`);
    const holder = new Client(databaseUrl());
    await holder.connect();
    try {
      await (await startApp({ schema, providers: [Nightly], options: { connection: role.url } })).close();
      // The other instance's reconcile: it holds the lock and writes the decorator's schedule while this boot waits.
      await holder.query(`CREATE TEMP TABLE saved AS SELECT * FROM "${schema}".schedules`);
      await holder.query(`DELETE FROM "${schema}".schedules`);
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`nestjs-durable:schedules:${schema}`]);
      const booting = startApp({ schema, providers: [Nightly], options: { connection: role.url } });
      booting.catch(() => undefined);
      await eventually(
        async () =>
          (
            await db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'advisory' AND usename = $1`,
              [`${schema}_rr`],
            )
          )[0].n === 1,
        'the boot to wait for the reconcile lock',
      );
      await holder.query(`INSERT INTO "${schema}".schedules SELECT * FROM saved`);
      await holder.query('COMMIT');
      // A snapshot taken before the wait saw no schedule: its insert met the committed row and failed the boot (40001).
      await (await booting).close();
      expect(await db.count('schedules', `name = 'nightly'`)).toBe(1);
    } finally {
      await holder.end();
      await role.drop();
    }
  });

  it("pause, resume and delete that wait for a pass holding the schedule apply after it, on a database whose default isolation is repeatable read; the delete leaves none of the pass's skips", async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const role = await repeatableReadRole(`${schema}_rr`);
    const pass = new Client(databaseUrl());
    await pass.connect();
    const app = await startApp({ schema, providers: [Nightly], options: { connection: role.url, sweeper: false } });
    try {
      const schedules = app.get(ScheduleService);
      await schedules.create({ name: 'held', workflow: Nightly, cron: '0 3 * * *' });
      /** What a pass does to a schedule it fires: locks the row, records a skipped slot, moves the row on; then commits on `release`. */
      const holding = async () => {
        await pass.query('BEGIN');
        await pass.query(`SELECT 1 FROM "${schema}".schedules WHERE name = 'held' FOR UPDATE`);
        await pass.query(`INSERT INTO "${schema}".schedule_skips (schedule, slot, reason) VALUES ('held', now(), 'overlap')`);
        await pass.query(`UPDATE "${schema}".schedules SET next_fire_at = now() + interval '1 day' WHERE name = 'held'`);
      };
      const waitingForIt = () =>
        eventually(
          async () =>
            (
              await db.query<{ n: number }>(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND usename = $1`,
                [`${schema}_rr`],
              )
            )[0].n === 1,
          'the action to wait for the pass',
        );
      for (const [action, check] of [
        [() => schedules.pause('held'), async () => expect((await schedules.get('held')).paused).toBe(true)],
        [() => schedules.resume('held'), async () => expect((await schedules.get('held')).paused).toBe(false)],
      ] as const) {
        await holding();
        const acting = action();
        acting.catch(() => undefined);
        await waitingForIt();
        await pass.query('COMMIT');
        await acting; // an update that waited for the row failed, under repeatable read (40001)
        await check();
      }
      await holding();
      const deleting = schedules.delete('held');
      deleting.catch(() => undefined);
      await waitingForIt();
      await pass.query('COMMIT');
      await deleting;
      // The skips' delete read them before the pass committed: the pass's skips stayed, and showed under a schedule made again with the name.
      expect(await db.count('schedules', `name = 'held'`)).toBe(0);
      expect(await db.count('schedule_skips', `schedule = 'held'`)).toBe(0);
    } finally {
      await pass.end();
      await app.close();
      await role.drop();
    }
  });

  it("an update that leaves 'bufferOne', or changes the cron, drops the buffered slot and records it as skipped for overlap", async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Nightly], options: { sweeper: false } });
    try {
      const schedules = app.get(ScheduleService);
      const slot = new Date('2026-01-05T02:00:00Z');
      for (const [name, patch] of [
        ['to-skip', { overlap: 'skip' }],
        ['new-cron', { cron: '0 4 * * *' }],
      ] as const) {
        await schedules.create({ name, workflow: Nightly, cron: '0 3 * * *', overlap: 'bufferOne' });
        // A slot buffered behind an unfinished run, as a pass leaves it.
        await db.query(`UPDATE durable.schedules SET buffered_slot = $2 WHERE name = $1`, [name, slot]);
        await schedules.update(name, patch);
        // Kept, it started a run under the old rules once the last run ended (with the old cron's scheduledAt).
        expect(await db.query(`SELECT buffered_slot FROM durable.schedules WHERE name = $1`, [name])).toEqual([{ buffered_slot: null }]);
        expect(await db.query(`SELECT slot, reason FROM durable.schedule_skips WHERE schedule = $1`, [name])).toEqual([
          { slot, reason: 'overlap' },
        ]);
      }
      // Still 'bufferOne', same cron: the buffered slot stays.
      await schedules.create({ name: 'kept', workflow: Nightly, cron: '0 3 * * *', overlap: 'bufferOne' });
      await db.query(`UPDATE durable.schedules SET buffered_slot = $1 WHERE name = 'kept'`, [slot]);
      await schedules.update('kept', { jitter: '1m' });
      expect(await db.query(`SELECT buffered_slot FROM durable.schedules WHERE name = 'kept'`)).toEqual([{ buffered_slot: slot }]);
      expect(await db.count('schedule_skips', `schedule = 'kept'`)).toBe(0);
    } finally {
      await app.close();
    }
  });

  it("a decorator's schedule is changed in its decorator: update() and delete() refuse it naming the workflow, and write nothing; pause() and resume() stay an operator's", async () => {
    const schema = fresh();
    const app = await startApp({ schema, providers: [Nightly] });
    try {
      const schedules = app.get(ScheduleService);
      const before = await schedules.get('nightly');
      // Every boot would put the decorator's spec back (and make a deleted one again, due from then on), without a word.
      await expect(schedules.update('nightly', { cron: '0 10 * * *' })).rejects.toThrow(
        /Schedule "nightly" is declared in @Workflow\("nightly"\)'s schedules, which every boot applies again: change it there/,
      );
      await expect(schedules.delete('nightly')).rejects.toThrow(/the next boot would make it again: take it out of the decorator first/);
      expect(await schedules.get('nightly')).toEqual(before);
      await schedules.pause('nightly');
      expect((await schedules.get('nightly')).paused).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('two updates of one schedule at once each keep the fields the other changed: each reads the spec it changes under the row lock', async () => {
    const schema = fresh();
    const app = await startApp({ schema, providers: [Nightly] });
    const holder = new Client(databaseUrl());
    await holder.connect();
    try {
      const schedules = app.get(ScheduleService);
      await schedules.create({ name: 'made', workflow: Nightly, cron: '0 3 * * *' });
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".schedules WHERE name = 'made' FOR UPDATE`);
      const updates = [schedules.update('made', { cron: '0 10 * * *' }), schedules.update('made', { input: { region: 'eu' } })];
      // From a session of its own: the holder's transaction would read the activity view once and keep that snapshot.
      await eventually(
        async () =>
          (
            await dbOf(schema).query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%' || $1 || '%schedules%'`,
              [schema],
            )
          )[0].n >= 2,
        'both updates to wait for the row',
      );
      await holder.query('COMMIT');
      await Promise.all(updates);
      expect(await schedules.get('made')).toMatchObject({ cron: '0 10 * * *', input: { region: 'eu' } });
    } finally {
      await holder.end();
      await app.close();
    }
  });

  it('a schedule whose slots cannot be decided (its stored cron refused) does not hold up the others: they fire, it waits a minute', async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Tick] });
    try {
      const schedules = app.get(ScheduleService);
      // Due first, and failing: a cron a newer cron library would refuse, written past the checks.
      await schedules.create({ name: 'broken', workflow: Tick, cron: '0 9 * * *' });
      await db.query(`UPDATE durable.schedules SET cron = 'not a cron', next_fire_at = now() - interval '1 hour' WHERE name = 'broken'`);
      await eventually(
        async () => (await db.count('runs', `starts_with(id, 'schedule:every-second:')`)) >= 3,
        'the other schedule fires',
        20_000,
      );
      const [broken] = await db.query<{ ahead: number; last_slot: Date }>(
        `SELECT extract(epoch FROM next_fire_at - now()) AS ahead, last_slot FROM durable.schedules WHERE name = 'broken'`,
      );
      expect(Number(broken.ahead)).toBeGreaterThan(30);
      expect(await db.count('runs', `starts_with(id, 'schedule:broken:')`)).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('a backlog after a long outage is decided in transactions of bounded size: every schedule catches up, none is stuck', async () => {
    const schema = fresh();
    const db = dbOf(schema);
    const app = await startApp({ schema, providers: [Nightly], options: { sweeper: false } });
    try {
      // 60 per-minute schedules back from 20 hours of downtime: 1,200 slots each, 1,000 (SLOTS_PER_PASS) a pass.
      await db.query(
        `INSERT INTO durable.schedules (name, workflow, source, cron, timezone, overlap, catchup_window_ms, catchup, input, last_slot, next_fire_at)
         SELECT 'tenant-' || n || '-report', 'nightly', 'api', '* * * * *', 'UTC', 'skip', 60000, 'latest', $1,
                date_trunc('minute', now()) - interval '20 hours', now()
         FROM generate_series(1, 60) n`,
        [serializePayload({}, 'input')],
      );
      const [{ from }] = await db.query<{ from: Date }>(`SELECT min(last_slot) AS from FROM durable.schedules WHERE name LIKE 'tenant-%'`);
      const pass = app.get(SchedulePass);
      await pass.run();
      await pass.run(); // a backlog longer than a pass, whichever transaction decided its first part
      // Each caught up to its pass's minute (a minute may turn while the test runs): every slot started or skipped, its newest
      // run ('latest'; a slot after that one, in a minute turned meanwhile, runs or is skipped for overlap).
      const caughtUp = await db.query<{ minutes: number; runs: number; skipped: number }>(
        `SELECT (extract(epoch FROM s.last_slot - $1::timestamptz) / 60)::int AS minutes,
                (SELECT count(*)::int FROM durable.runs r WHERE starts_with(r.id, 'schedule:' || s.name || ':')) AS runs,
                (SELECT count(*)::int FROM durable.schedule_skips k WHERE k.schedule = s.name) AS skipped
         FROM durable.schedules s WHERE s.name LIKE 'tenant-%' AND s.last_slot >= date_trunc('minute', now()) - interval '1 minute'`,
        [from],
      );
      expect(caughtUp).toHaveLength(60);
      for (const { minutes, runs, skipped } of caughtUp) {
        expect(minutes).toBeGreaterThanOrEqual(1_200);
        expect(runs).toBeGreaterThanOrEqual(1);
        expect(runs + skipped).toBe(minutes);
      }
      // Before: one transaction took the batch's every skipped slot, here 60,000, and 2,500 such schedules (2.5 million
      // slots) overran the one jsonb value they travel in: that pass failed, and every pass after it, with the same ones.
      const [{ most }] = await db.query<{ most: number }>(
        `SELECT max(n)::int AS most FROM (SELECT count(*) AS n FROM durable.schedule_skips GROUP BY xmin::text) t`,
      );
      expect(most).toBeLessThanOrEqual(SLOTS_PER_TRANSACTION + 1_000);
    } finally {
      await app.close();
    }
  });

  it('the connections a crowd of due schedules is fired on are opened before its slot, not at it', async () => {
    const app = await startApp({ schema: fresh(), providers: [Nightly] });
    try {
      const { pool } = app.get(DurableDatabase);
      // Let the connections of the boot go, then keep the ones opened from here on.
      pool.options.idleTimeoutMillis = 20;
      await eventually(async () => pool.totalCount <= 2, 'the pool to shrink');
      pool.options.idleTimeoutMillis = 60_000;
      let most = 0;
      pool.on('connect', () => (most = Math.max(most, pool.totalCount)));
      // A paused per-second schedule: each pass fires it in one transaction (its slots skipped), and each sweep aims at the next slot.
      await app.get(ScheduleService).create({ name: 'warm', workflow: Nightly, cron: '* * * * * *', paused: true });
      await eventually(async () => most >= PARALLEL_TRANSACTIONS, `${PARALLEL_TRANSACTIONS} connections opened before a slot`);
    } finally {
      await app.close();
    }
  });
});
