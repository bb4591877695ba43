import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { DURABLE_DATA_SOURCE, DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { RunRepository } from 'nestjs-durable/persistence/run.repository';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const gates = new Map<string, () => void>();

/** Holds its lease, executing, until the test opens its gate. */
@Workflow('held')
class Held implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await new Promise<void>((open) => gates.set(ctx.runId, open));
    return 'done';
  }
}

/** Step bodies that ran, as `runId:step`. */
const effects: string[] = [];
/** Runs whose gate the test opened: an execution of one of them after that passes straight on. */
const opened = new Set<string>();

/** A step, then a pause that is not durable (slow code between steps), then another step. */
@Workflow('stepped')
class Stepped implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('a', () => effects.push(`${ctx.runId}:a`));
    if (!opened.has(ctx.runId)) await new Promise<void>((open) => gates.set(ctx.runId, open));
    await ctx.step('b', () => effects.push(`${ctx.runId}:b`));
    return 'done';
  }
}

describe('lease renewal', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;
  afterEach(() => t.close());
  afterAll(() => db.dropSchema());

  const executing = async () => {
    const run = await t.client.start(Held, null);
    await eventually(async () => gates.has(run.runId), 'the run to execute');
    return run;
  };
  /** The expiry of the lease the run was started with (token 1), undefined once another claim took it. */
  const leaseExpiry = async (runId: string) =>
    (await db.query(`SELECT wake_at FROM durable.runs WHERE id = $1 AND lease_token = 1`, [runId]))[0]?.wake_at.getTime() as
      number | undefined;

  it("an application transaction holding one run's row does not hold up the renewal of other leases, nor costs that run its lease", async () => {
    // A lease this long never lapses within the test; the renewals it checks are the ones it asks for.
    t = await startApp({ schema, providers: [Held], options: { leaseMs: 60_000 } });
    const worker = t.get(DurableWorker);
    const free = await executing();
    const locked = await executing();
    // A signal delivered inside an open application transaction locks the run's row until it commits.
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    let delivered!: () => void;
    const inTransaction = new Promise<void>((resolve) => (delivered = resolve));
    const transaction = t.get<DataSource>(DURABLE_DATA_SOURCE as never).transaction(async (manager) => {
      await t.signals.signal(locked.runId, 'poke', null, { manager });
      delivered();
      await committed;
    });
    await inTransaction;
    // Two renewals while the row stays locked: each returns (it never waits on the locked row) and moves the other lease on.
    for (const renewal of [1, 2]) {
      const before = (await leaseExpiry(free.runId))!;
      await worker.renew();
      expect((await leaseExpiry(free.runId))!).toBeGreaterThan(before);
    }
    expect(worker.isExecuting(locked.runId)).toBe(true); // skipped this beat, not lost
    commit();
    await transaction;
    for (const run of [free, locked]) gates.get(run.runId)!();
    for (const run of [free, locked]) expect(await run.result({ timeout: '5s' })).toBe('done');
    expect(await db.count('history', `event = 'lease-taken-over'`)).toBe(0);
  });

  describe('a lease that lapsed while its renewals skipped the locked row', () => {
    let other: Client;
    /** Starts a Stepped run, lets it pass step a, then holds its row as a checkpoint in flight does until its lease lapses. */
    const lapsed = async () => {
      t = await startApp({ schema, providers: [Stepped], options: { leaseMs: 1_000 } });
      const run = await t.client.start(Stepped, null);
      await eventually(async () => gates.has(run.runId), 'step a to be checkpointed');
      other = new Client(databaseUrl());
      await other.connect();
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR SHARE`, [run.runId]);
      await eventually(async () => (await db.count('runs', 'id = $1 AND wake_at < now()', [run.runId])) === 1, 'the lease to lapse');
      return run;
    };
    const open = (runId: string) => {
      opened.add(runId);
      gates.get(runId)!();
    };
    afterEach(() => other.end());

    it('is not trusted for a new step: once another worker has taken the run over, the step never begins here', async () => {
      const run = await lapsed();
      const worker = t.get(DurableWorker);
      // The run taken over, as another worker's sweeper does to a lapsed lease.
      await other.query(
        `UPDATE "${schema}".runs SET lease_token = lease_token + 1, lease_owner = 'elsewhere', wake_at = now() + interval '1 hour' WHERE id = $1`,
        [run.runId],
      );
      await other.query('COMMIT');
      open(run.runId);
      await eventually(async () => !worker.isExecuting(run.runId), 'the execution to stop');
      expect(effects.filter((e) => e.startsWith(run.runId))).toEqual([`${run.runId}:a`]);
      expect(await db.count('steps', 'run_id = $1', [run.runId])).toBe(1);
    });

    it('holds the next step back until a renewal gets through, then the run goes on: each step ran once', async () => {
      const run = await lapsed();
      open(run.runId);
      await t.get(DurableWorker).renew(); // skipped again: the row is still held
      expect(effects.filter((e) => e.startsWith(run.runId))).toEqual([`${run.runId}:a`]);
      await other.query('ROLLBACK');
      expect(await run.result({ timeout: '10s' })).toBe('done');
      expect(effects.filter((e) => e.startsWith(run.runId))).toEqual([`${run.runId}:a`, `${run.runId}:b`]);
    });
  });

  it('a renewal answers a lease whose run its own execution ended meanwhile as ended, not lost; one whose token moved as lost', async () => {
    t = await startApp({ schema, providers: [Held], options: { leaseMs: 60_000 } });
    const worker = t.get(DurableWorker);
    const [ended, taken] = [await executing(), await executing()];
    const tokens = new Map(
      (await db.query(`SELECT id, lease_token::text AS token FROM durable.runs WHERE id = ANY($1)`, [[ended.runId, taken.runId]])).map(
        (r) => [r.id, r.token],
      ),
    );
    gates.get(ended.runId)!();
    await ended.result({ timeout: '5s' });
    await db.query(`UPDATE durable.runs SET lease_token = lease_token + 1 WHERE id = $1`, [taken.runId]); // as a takeover does
    // The leases as the worker listed them before the end: the end's run answers as no longer running (its execution
    // closes the lease, nothing to warn of), the other is missing (lost: its execution stops).
    const answer = await t.get(RunRepository).renew(
      worker.id,
      [...tokens].map(([id, token]) => ({ id, token })),
      60_000,
      {},
      null,
      1_000,
    );
    expect([answer.get(ended.runId)?.running, answer.has(taken.runId)]).toEqual([false, false]);
    gates.get(taken.runId)!();
  });

  it('a renewal asked for while one is in flight joins it: never two renewals at once', async () => {
    // A lease this long is renewed every 20 s: within the test only the renewals it asks for run.
    t = await startApp({ schema, providers: [Held], options: { leaseMs: 60_000 } });
    const worker = t.get(DurableWorker);
    await executing();
    await eventually(async () => (await db.count('instances', 'id = $1', [worker.id])) === 1, 'the first heartbeat');
    await db.query(`CREATE TABLE durable.beats (at timestamptz DEFAULT clock_timestamp())`);
    await db.query(
      `CREATE FUNCTION durable.count_beat() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO ${`"${schema}"`}.beats DEFAULT VALUES; RETURN NEW; END $$`,
    );
    await db.query(`CREATE TRIGGER beat AFTER UPDATE ON durable.instances FOR EACH ROW EXECUTE FUNCTION durable.count_beat()`);
    // Another session holds this instance's heartbeat row: the renewal in flight waits there.
    const blocker = new Client(databaseUrl());
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT 1 FROM "${schema}".instances WHERE id = $1 FOR UPDATE`, [worker.id]);
    const first = worker.renew();
    await eventually(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%heartbeat_at%' AND datname = current_database()`,
          )
        ).length > 0,
      'the renewal to wait',
    );
    const second = worker.renew();
    await blocker.query('ROLLBACK');
    await blocker.end();
    await Promise.all([first, second]);
    expect(await db.count('beats')).toBe(1);
    for (const open of gates.values()) open();
  });
});
