import type { DataSource } from 'typeorm';
import { CancelledError, DURABLE_DATA_SOURCE, DurableWorkflow, InvalidArgumentError, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableTestingModule } from 'nestjs-durable/testing';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { Db, DurableTestApp, startApp, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'delayed-token-0123456789abcdef';

/** Records when it first executed, then waits for a note (a signal may have come before it started). */
@Workflow('greeting')
class Greeting implements DurableWorkflow<{ name: string }, { startedAt: Date; note: string }> {
  async run(input: { name: string }, ctx: WorkflowContext) {
    const startedAt = await ctx.step('started', () => new Date());
    const note = await ctx.waitForSignal<string>('note');
    return { startedAt, note: `${note}, ${input.name}` };
  }
}

/** Records when it executed. */
@Workflow('stamp')
class Stamp implements DurableWorkflow<null, Date> {
  async run(_input: null, ctx: WorkflowContext) {
    return ctx.step('stamp', () => new Date());
  }
}

const providers = [Greeting, Stamp];

describe('delayed start', () => {
  const schema = uniqueSchema('ds');
  const db = new Db(schema);
  let t: DurableTestApp;

  const runRow = async (runId: string) =>
    (await db.query(`SELECT status, wait, wait_kind, wake_at, created_at, lease_owner FROM durable.runs WHERE id = $1`, [runId]))[0];
  const events = async (runId: string) =>
    (await db.query<{ event: string }>(`SELECT event FROM durable.history WHERE run_id = $1 ORDER BY id`, [runId])).map((r) => r.event);

  beforeAll(async () => {
    t = await startApp({ schema, providers, listen: true, options: { dashboard: { auth: { token: TOKEN } } } });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('a delayed run exists at once, waiting with reason start until its instant, which its started history row records', async () => {
    const startAt = new Date(Date.now() + 3_600_000);
    const handle = await t.client.start(Stamp, null, { startAt });
    expect(handle.created).toBe(true);
    await expect(handle.status()).resolves.toBe('waiting');
    const run = await t.client.getRun(handle.runId);
    expect(run.waiting).toEqual({ kind: 'start', until: startAt, since: expect.any(Date) });
    const row = await runRow(handle.runId);
    expect(row).toMatchObject({ status: 'waiting', wait_kind: 'start', wake_at: startAt, lease_owner: null });
    const [started] = await db.query(`SELECT actor, detail FROM durable.history WHERE run_id = $1 AND event = 'started'`, [handle.runId]);
    expect(started.actor).toBe('api');
    expect(new Date(started.detail.startAt)).toEqual(startAt);
    const { runs } = await t.client.listRuns({ waitingFor: 'start' });
    expect(runs.map((r) => r.runId)).toContain(handle.runId);
    await t.client.cancel(handle.runId);
  });

  it("a delay is measured from the database's clock", async () => {
    const handle = await t.client.start(Stamp, null, { delay: '2h' });
    const row = await runRow(handle.runId);
    // created_at is the transaction's now(); the instant is the statement's start plus the delay, cut to the
    // millisecond. The two differ by the time between the transaction's first message and the statement's: 2 ms
    // once on a busy CI machine, where a bound of 1 ms failed.
    expect(Math.abs(row.wake_at.getTime() - row.created_at.getTime() - 7_200_000)).toBeLessThanOrEqual(250);
    expect((await t.client.getRun(handle.runId)).waiting).toEqual({ kind: 'start', until: row.wake_at, since: expect.any(Date) });
    await t.client.cancel(handle.runId);
  });

  it('a signal delivered meanwhile is buffered: it does not start the run early, and the run reads it once it starts', async () => {
    const handle = await t.client.start(Greeting, { name: 'Ada' }, { delay: 1_500 });
    const { wake_at: until } = await runRow(handle.runId);
    const delivery = await t.signals.signal(handle.runId, 'note', 'hello');
    expect(delivery.accepted).toBe(true);
    const after = await runRow(handle.runId);
    expect(after).toMatchObject({ status: 'waiting', wait_kind: 'start', wake_at: until });
    const { startedAt, note } = await handle.result({ timeout: '15s' });
    expect(note).toBe('hello, Ada');
    expect(startedAt.getTime()).toBeGreaterThanOrEqual(until.getTime());
    expect(await events(handle.runId)).toEqual(['started', 'signal-delivered', 'claimed', 'completed']);
  });

  it('resume starts a delayed run now, and says so in its history', async () => {
    const handle = await t.client.start(Stamp, null, { delay: '1h' });
    const resumedAt = Date.now();
    await t.client.resume(handle.runId, { actor: 'ops' });
    const stamp = await handle.result({ timeout: '10s' });
    expect(stamp.getTime() - resumedAt).toBeLessThan(5_000);
    const [row] = await db.query(`SELECT actor, detail FROM durable.history WHERE run_id = $1 AND event = 'resumed'`, [handle.runId]);
    expect(row).toEqual({ actor: 'ops', detail: { waitKind: 'start' } });
  });

  it('cancel cancels a delayed run while it waits; it never executes', async () => {
    const handle = await t.client.start(Stamp, null, { delay: '1h' });
    await t.client.cancel(handle.runId, 'not needed');
    await expect(handle.result({ timeout: '5s' })).rejects.toBeInstanceOf(CancelledError);
    expect(await events(handle.runId)).toEqual(['started', 'cancelled']);
    expect(await db.count('steps', 'run_id = $1', [handle.runId])).toBe(0);
  });

  it('an instant already past, or a delay of 0, starts the run as an undelayed start does', async () => {
    for (const opts of [{ startAt: new Date(Date.now() - 60_000) }, { delay: 0 }]) {
      const handle = await t.client.start(Stamp, null, opts);
      await handle.result({ timeout: '10s' });
      const [started] = await db.query(`SELECT detail FROM durable.history WHERE run_id = $1 AND event = 'started'`, [handle.runId]);
      expect(started.detail).toBeNull();
      expect(await events(handle.runId)).not.toContain('claimed'); // started claimed by this instance, as usual
    }
  });

  it('a delayed run survives a restart: the app that created it closes, another on the same schema starts it on time', async () => {
    const first = await startApp({ schema, providers });
    const handle = await first.client.start(Stamp, null, { delay: 1_500 });
    const { wake_at: until } = await runRow(handle.runId);
    await first.close();
    const second = await startApp({ schema, providers });
    try {
      const stamp = await second.client.handle<Date>(handle.runId).result({ timeout: '15s' });
      expect(stamp.getTime()).toBeGreaterThanOrEqual(until.getTime());
      expect(stamp.getTime() - until.getTime()).toBeLessThan(2_000); // within a few sweeps of 200 ms
    } finally {
      await second.close();
    }
  });

  it('the sweeper alone starts a delayed run on time on another instance (worker disabled where it was created)', async () => {
    const creator = await startApp({ schema, providers, options: { worker: { enabled: false } } });
    try {
      const handle = await creator.client.start(Stamp, null, { delay: 1_000 });
      const { wake_at: until } = await runRow(handle.runId);
      const stamp = await t.client.handle<Date>(handle.runId).result({ timeout: '15s' });
      expect(stamp.getTime()).toBeGreaterThanOrEqual(until.getTime());
      expect(stamp.getTime() - until.getTime()).toBeLessThan(2_000); // within a few sweeps of 200 ms
      const [claim] = await db.query(`SELECT actor, detail FROM durable.history WHERE run_id = $1 AND event = 'claimed'`, [handle.runId]);
      expect(claim).toEqual({ actor: t.get(DurableWorker).id, detail: { from: 'waiting', previousOwner: null } });
    } finally {
      await creator.close();
    }
  });

  it('bad start options throw InvalidArgumentError naming the option, and write nothing', async () => {
    const bad: Array<[object, RegExp]> = [
      [{ startAt: new Date(Date.now() + 60_000), delay: '1m' }, /either startAt or delay, not both/],
      [{ startAt: new Date(Number.NaN) }, /startAt must be a valid Date; got an invalid Date/],
      [{ startAt: '2030-01-01T00:00:00Z' }, /startAt must be a valid Date; got the string/],
      [{ startAt: new Date(Date.now() + 200 * 365 * 86_400_000) }, /startAt must be at most 100 years ahead/],
      [{ startAt: new Date(-8.64e15) }, /startAt must be at most 100 years past/],
      [{ delay: '5 minutes' }, /delay "5 minutes" is not a duration/],
      [{ delay: -1 }, /delay must be a finite number of milliseconds/],
      [{ delay: Number.NaN }, /delay must be a finite number of milliseconds/],
    ];
    for (const [i, [opts, message]] of bad.entries()) {
      const attempt = t.client.start(Stamp, null, { runId: `bad-${i}`, ...opts });
      await expect(attempt).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(attempt).rejects.toThrow(message);
    }
    expect(await db.count('runs', `id LIKE 'bad-%'`)).toBe(0);
    expect(await db.count('history', `run_id LIKE 'bad-%'`)).toBe(0);
  });

  it('with { manager }, a delayed start rolled back leaves nothing; committed, it waits for its instant', async () => {
    const dataSource = t.get<DataSource>(DURABLE_DATA_SOURCE as never);
    await expect(
      dataSource.transaction(async (manager) => {
        await t.client.start(Stamp, null, { runId: 'tx-rolled-back', delay: '1h', manager });
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    expect(await db.count('runs', `id = 'tx-rolled-back'`)).toBe(0);
    expect(await db.count('history', `run_id = 'tx-rolled-back'`)).toBe(0);

    await dataSource.transaction((manager) => t.client.start(Stamp, null, { runId: 'tx-committed', delay: '1h', manager }));
    expect((await t.client.getRun('tx-committed')).waiting).toMatchObject({ kind: 'start' });
    await t.client.cancel('tx-committed');

    // The delay counts from the start, not from the beginning of the transaction it is made in.
    const asked = await dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_sleep(1)'); // the transaction's work before the start
      const [{ at }] = await manager.query(`SELECT statement_timestamp() AS at`);
      await t.client.start(Stamp, null, { runId: 'tx-late', delay: '3s', manager });
      await t.client.start(Stamp, null, { runId: 'tx-timed', timeout: '1h', manager }); // its deadline, likewise
      return (at as Date).getTime();
    });
    const late = await t.client.getRun('tx-late');
    expect((late.waiting as { until: Date }).until.getTime()).toBeGreaterThanOrEqual(asked + 3_000); // before: 2 s after the start
    expect((await t.client.getRun('tx-timed')).deadline!.getTime()).toBeGreaterThanOrEqual(asked + 3_600_000);
    await t.client.cancel('tx-late');
  });

  describe('POST /runs', () => {
    const post = (body: unknown) =>
      fetch(`${t.url}/durable/api/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-durable-request': '1' },
        body: JSON.stringify(body),
      });

    it('takes startAt (ISO-8601) or delay (a Duration) and answers 201 with the run waiting for its instant', async () => {
      const startAt = new Date(Date.now() + 3_600_000);
      const at = await post({ workflow: 'stamp', input: null, runId: 'rest-at', startAt: startAt.toISOString() });
      expect(at.status).toBe(201);
      expect((await t.client.getRun('rest-at')).waiting).toEqual({ kind: 'start', until: startAt, since: expect.any(Date) });
      const after = await post({ workflow: 'stamp', input: null, runId: 'rest-delay', delay: '2h' });
      expect(after.status).toBe(201);
      expect((await t.client.getRun('rest-delay')).waiting).toMatchObject({ kind: 'start' });
      const detail = (await (
        await fetch(`${t.url}/durable/api/runs/rest-at`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as { run: { waiting: unknown } };
      expect(detail.run.waiting).toEqual({ kind: 'start', until: startAt.toISOString(), since: expect.any(String) });
      for (const id of ['rest-at', 'rest-delay']) await t.client.cancel(id);
    });

    it('refuses bad startAt and delay with 400 naming the field, and writes nothing', async () => {
      const bad: Array<[object, string]> = [
        [{ startAt: '2030-01-01T00:00:00Z', delay: '1m' }, 'give either "startAt" or "delay", not both'],
        [{ startAt: 'tomorrow' }, 'Body field "startAt": must be an ISO-8601 date and time with its offset'],
        [{ startAt: '2030-01-01T09:00:00' }, 'Body field "startAt": must be an ISO-8601 date and time with its offset'],
        [{ startAt: 1_900_000_000_000 }, 'Body field "startAt": must be a string'],
        [{ delay: '5 minutes' }, 'Body field "delay": must be a duration'],
        [{ delay: -5 }, 'Body field "delay": must be a duration'],
        [{ delay: true }, 'Body field "delay": must be milliseconds (a number) or text such as "30s"'],
        [{ startAt: '2300-01-01T00:00:00Z' }, 'startAt must be at most 100 years ahead'],
      ];
      for (const [i, [fields, message]] of bad.entries()) {
        const response = await post({ workflow: 'stamp', input: null, runId: `rest-bad-${i}`, ...fields });
        const body = (await response.json()) as { code: string; message: string };
        expect({ fields, status: response.status, code: body.code }).toEqual({ fields, status: 400, code: 'INVALID_ARGUMENT' });
        expect(body.message).toContain(message);
      }
      expect(await db.count('runs', `id LIKE 'rest-bad-%'`)).toBe(0);
    });
  });
});

describe('delayed start under the test clock', () => {
  let durable: DurableTestingModule;

  beforeAll(async () => {
    durable = await DurableTestingModule.create({ providers });
  });
  afterAll(() => durable.close());

  it('advancing the clock past the instant starts the run; short of it, the run still waits', async () => {
    const run = await durable.client.start(Stamp, null, { delay: '3d' });
    const until = ((await durable.waitReason(run.runId)) as { kind: 'start'; until: Date }).until;
    await durable.clock.advance('2d');
    expect(await durable.waitReason(run.runId)).toEqual({
      kind: 'start',
      until: new Date(until.getTime() - 2 * 86_400_000),
      since: expect.any(Date),
    });
    await durable.clock.advance('1d');
    expect((await durable.run(run.runId)).status).toBe('completed');
  });
});
