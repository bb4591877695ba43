import { Client } from 'pg';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { deliverSignalSql } from 'nestjs-durable/persistence/sql/deliver-signal.sql';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

@Workflow('listens')
class Listens implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.receive<string>('events');
  }
}

@Workflow('awaits-go')
class AwaitsGo implements DurableWorkflow<null, string> {
  run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal<string>('go');
  }
}

/**
 * A step whose effect is counted and which returns when the test opens its gate; then another step
 * when `then` says so (so that the first's checkpoint is written on its own, not with the end).
 */
const effects = new Map<string, number>();
const gates = new Map<string, () => void>();
@Workflow('gated-effect')
class GatedEffect implements DurableWorkflow<'step' | 'end', string> {
  async run(then: 'step' | 'end', ctx: WorkflowContext) {
    const result = await ctx.step('effect', async () => {
      effects.set(ctx.runId, (effects.get(ctx.runId) ?? 0) + 1);
      await new Promise<void>((open) => gates.set(ctx.runId, open));
      return 'done';
    });
    return then === 'step' ? ctx.step('after', () => result) : result;
  }
}

/** Counts its executions; the first waits for the test to open its gate, then each ends as `input` says. */
const executions = new Map<string, number>();
@Workflow('gated-end')
class GatedEnd implements DurableWorkflow<'park' | 'finish', string> {
  async run(input: 'park' | 'finish', ctx: WorkflowContext) {
    const execution = (executions.get(ctx.runId) ?? 0) + 1;
    executions.set(ctx.runId, execution);
    if (execution === 1) await new Promise<void>((open) => gates.set(ctx.runId, open));
    return input === 'park' ? ctx.waitForSignal<string>('go') : 'done';
  }
}

/**
 * Holds a lock from another session until released (a run's row by default, or what `lock` takes);
 * finds the library session waiting on it.
 */
async function lockRun(
  schema: string,
  db: Db,
  runId: string,
  waiting: string,
  lock = `SELECT 1 FROM "${schema}".runs WHERE id = $1 FOR UPDATE`,
) {
  const blocker = new Client(databaseUrl());
  await blocker.connect();
  const [{ pid: blockerPid }] = (await blocker.query('SELECT pg_backend_pid() AS pid')).rows;
  await blocker.query('BEGIN');
  await blocker.query(lock, [runId]);
  return {
    // Only a session this blocker holds up: files running side by side have sessions of the same statements.
    waiter: () =>
      eventually(async () => {
        const rows = await db.query(
          `SELECT pid FROM pg_stat_activity WHERE $2 = ANY(pg_blocking_pids(pid)) AND query LIKE $1 AND datname = current_database()`,
          [waiting, blockerPid],
        );
        return rows.length > 0 && (rows[0].pid as number);
      }, 'a library session to wait for the run row'),
    release: async () => {
      await blocker.query('ROLLBACK');
      await blocker.end();
    },
  };
}

describe('a session cut in the middle of a delivery or a checkpoint', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({ schema, providers: [Listens, GatedEffect, GatedEnd, AwaitsGo] });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  /** Cuts the library session that waits on `lock`'s lock, then lets the next try through. */
  const cutWhileLocked = async (lock: Awaited<ReturnType<typeof lockRun>>) => {
    await db.query('SELECT pg_terminate_backend($1)', [await lock.waiter()]);
    await lock.release();
  };

  it('a send whose session is cut is sent again on another connection: the message lands once, and the pool serves on', async () => {
    const run = await t.client.start(Listens, null);
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to wait');
    // Another session holds the run's row lock, so send() waits inside its own transaction, and its session is cut there.
    const lock = await lockRun(schema, db, run.runId, '%FOR UPDATE%');
    const sending = t.signals.send(run.runId, 'events', 'k1', 'hello');
    await cutWhileLocked(lock);
    expect(await sending).toMatchObject({ accepted: true, seq: 1 });
    expect(await run.result({ timeout: '5s' })).toMatchObject({ key: 'k1', payload: 'hello' });
    expect(await db.count('messages', 'run_id = $1', [run.runId])).toBe(1);
  });

  it('a signal delivery whose session is cut is delivered again on another connection, once', async () => {
    const run = await t.client.start(GatedEnd, 'park');
    await eventually(async () => gates.has(run.runId), 'the run to execute');
    gates.get(run.runId)!();
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to park');
    const lock = await lockRun(schema, db, run.runId, '%$6::text[] IS NULL%');
    const delivering = t.signals.signal(run.runId, 'go', 'now');
    await cutWhileLocked(lock);
    expect(await delivering).toMatchObject({ accepted: true });
    expect(await run.result({ timeout: '5s' })).toBe('now');
    expect(await db.count('history', `run_id = $1 AND event = 'signal-delivered'`, [run.runId])).toBe(1);
  });

  it('a start whose session is cut is inserted again on another connection: one run, created and executed once', async () => {
    const runId = `cut-start-${Date.now()}`;
    // Another session inserts the same id and keeps its transaction open: the start waits on it, and is cut there.
    const lock = await lockRun(
      schema,
      db,
      runId,
      '%$1::int AS ord%', // the lone claimed start (startClaimedRunSql), by its first line: pg_stat_activity keeps the first 1 KiB
      `INSERT INTO "${schema}".runs (id, workflow, status) VALUES ($1, 'gated-end', 'pending')`,
    );
    const starting = t.client.start(GatedEnd, 'finish', { runId });
    await cutWhileLocked(lock);
    const run = await starting;
    expect(run.created).toBe(true);
    await eventually(async () => gates.has(runId), 'the run to execute');
    gates.get(runId)!();
    expect(await run.result({ timeout: '5s' })).toBe('done');
    expect(executions.get(runId)).toBe(1);
    expect(await db.count('history', `run_id = $1 AND event = 'started'`, [runId])).toBe(1);
  });

  it('a repeated start of a run executing here, whose first try is cut, answers that it existed and leaves the execution alone', async () => {
    const runId = `repeat-start-${Date.now()}`;
    const first = await t.client.start(GatedEffect, 'end', { runId });
    await eventually(async () => gates.has(runId), 'the first start executing its step');
    // The repeated start's insert waits on a lock of the table, and its session is cut there: its next try finds the id.
    const blocker = new Client(databaseUrl());
    await blocker.connect();
    try {
      const [{ pid: blockerPid }] = (await blocker.query('SELECT pg_backend_pid() AS pid')).rows;
      await blocker.query(`BEGIN; LOCK TABLE "${schema}".runs IN SHARE MODE`);
      const repeating = t.client.start(GatedEffect, 'end', { runId });
      const waiter = await eventually(async () => {
        const rows = await db.query(
          `SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE '%$1::int AS ord%'`,
          [blockerPid],
        );
        return rows.length > 0 && (rows[0].pid as number);
      }, 'the repeated start waiting on the lock');
      await db.query('SELECT pg_terminate_backend($1)', [waiter]);
      await blocker.query('ROLLBACK');
      // Claimed back as if its own lost try had inserted it, the run was taken from its execution, whose step then ran twice.
      expect((await repeating).created).toBe(false);
    } finally {
      await blocker.end();
    }
    gates.get(runId)!();
    expect(await first.result({ timeout: '5s' })).toBe('done');
    expect(effects.get(runId)).toBe(1);
    expect(await db.count('history', `run_id = $1 AND event = 'started'`, [runId])).toBe(1);
  });

  /** Cuts the session of the write that ends the run's first execution; it must land all the same. */
  const endCutAndLanded = async (end: 'park' | 'finish', statement: string, status: 'waiting' | 'completed') => {
    const run = await t.client.start(GatedEnd, end);
    await eventually(async () => gates.has(run.runId), 'the run to execute');
    const lock = await lockRun(schema, db, run.runId, statement);
    gates.get(run.runId)!(); // the run ends its execution: that write waits for the row lock, and is cut there
    await cutWhileLocked(lock);
    await eventually(async () => (await t.client.getRun(run.runId)).status === status, `the run to be ${status}`);
    expect(executions.get(run.runId)).toBe(1);
    expect(await db.count('history', `run_id = $1 AND event = 'lease-taken-over'`, [run.runId])).toBe(0);
    expect(await db.count('history', `run_id = $1 AND event IN ('parked', 'completed')`, [run.runId])).toBe(1);
  };

  it('a park whose session is cut still lands, by the same execution and without a takeover', () =>
    endCutAndLanded('park', '%wait = $3::jsonb%', 'waiting'));

  it('a finish whose session is cut still lands, by the same execution and without a takeover', () =>
    endCutAndLanded('finish', '%output = $4%', 'completed'));

  /** Cuts the session of the write of step `effect`'s checkpoint, `then` the step after or the end (whose statement it rides in). */
  const checkpointCutAndWritten = async (then: 'step' | 'end', statement: string) => {
    const run = await t.client.start(GatedEffect, then);
    await eventually(async () => gates.has(run.runId), 'the step to run');
    const lock = await lockRun(schema, db, run.runId, statement);
    gates.get(run.runId)!(); // the step returns; its checkpoint waits for the row lock...
    await db.query('SELECT pg_terminate_backend($1)', [await lock.waiter()]); // ...and its session is cut there
    await lock.release();
    expect(await run.result({ timeout: '10s' })).toBe('done');
    expect(effects.get(run.runId)).toBe(1);
    expect((await t.client.getRun(run.runId)).attempt).toBe(1);
    expect(await db.count('steps', `run_id = $1 AND key = 'effect'`, [run.runId])).toBe(1);
  };

  it('a checkpoint write whose session is cut is written again on another connection: the step does not run twice', () =>
    checkpointCutAndWritten('step', '%FOR SHARE%'));

  it("an end whose session is cut with the last step's checkpoint in it is sent again: the step does not run twice", () =>
    checkpointCutAndWritten('end', '%output = $4%'));
  /**
   * The first call of the database's `method` that `loses` picks commits and then loses its answer, as
   * a session cut after the commit would. Answers whether one was lost.
   */
  const loseFirstAnswer = (method: 'query' | 'transaction', loses: (args: unknown[]) => boolean) => {
    const database = t.get(DurableDatabase);
    const original = (database[method] as (...args: unknown[]) => Promise<unknown>).bind(database);
    let lost = false;
    const spy = jest.spyOn(database, method).mockImplementation((async (...args: unknown[]) => {
      const answer = await original(...args);
      if (!lost && loses(args)) {
        lost = true;
        throw new Error('Connection terminated unexpectedly');
      }
      return answer;
    }) as never);
    return () => {
      spy.mockRestore();
      return lost;
    };
  };
  /** The run's `claimed` history rows' tokens, and its token now. */
  const claims = async (runId: string) => ({
    tokens: (
      await db.query<{ token: string }>(
        `SELECT detail->>'token' AS token FROM "${schema}".history WHERE run_id = $1 AND event = 'claimed'`,
        [runId],
      )
    ).map((r) => r.token),
    now: (await db.query<{ lease_token: string }>(`SELECT lease_token FROM "${schema}".runs WHERE id = $1`, [runId]))[0].lease_token,
  });

  it('a signal whose committed answer was lost claims back the run its first try claimed: accepted, executed here at once', async () => {
    const run = await t.client.start(AwaitsGo, null);
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to wait');
    const restore = loseFirstAnswer('query', ([sql]) => sql === deliverSignalSql(t.get(DurableDatabase).tables));
    expect(await t.signals.signal(run.runId, 'go', 'once')).toMatchObject({ accepted: true });
    expect(restore()).toBe(true);
    expect(await run.result({ timeout: '5s' })).toBe('once');
    // One claim (the lost try's), then the next token: claimed back, not claimed again once its lease lapsed.
    const { tokens, now } = await claims(run.runId);
    expect(tokens).toHaveLength(1);
    expect(Number(now)).toBe(Number(tokens[0]) + 1);
  });

  it('a send whose committed answer was lost claims back the run its first try claimed: accepted, executed here at once', async () => {
    const run = await t.client.start(Listens, null);
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to wait');
    const restore = loseFirstAnswer('transaction', () => true);
    expect(await t.signals.send(run.runId, 'events', 'k-lost', 'hello')).toMatchObject({ accepted: true, seq: 1 });
    expect(restore()).toBe(true);
    expect(await run.result({ timeout: '5s' })).toMatchObject({ key: 'k-lost', payload: 'hello' });
    const { tokens, now } = await claims(run.runId);
    expect(tokens).toHaveLength(1);
    expect(Number(now)).toBe(Number(tokens[0]) + 1);
    expect(await db.count('messages', 'run_id = $1', [run.runId])).toBe(1);
  });

  it('a session cut the moment it is handed out, before its borrower listens, does not end the process: the send lands', async () => {
    const run = await t.client.start(Listens, null);
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to wait');
    // The FATAL of a cut read in the same chunk as the session's ready message reaches the client
    // before the borrower's await resumes: here, on the next tick after the pool hands it out.
    const cut = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    t.get(DurableDatabase).pool.once('acquire', (client) => process.nextTick(() => client.emit('error', cut)));
    expect(await t.signals.send(run.runId, 'events', 'k-gap', 'after the gap')).toMatchObject({ accepted: true });
    expect(await run.result({ timeout: '5s' })).toMatchObject({ key: 'k-gap' });
  });
});
