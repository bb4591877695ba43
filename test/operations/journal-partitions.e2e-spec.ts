import { Client } from 'pg';
import { DurableWorkflow, RetentionService, runDurableMigrations, Workflow, WorkflowContext } from 'nestjs-durable';
import { createJournalPartitionsSql } from 'nestjs-durable/persistence/journal-partitions';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { databaseUrl, Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';
import { migratedBefore } from '../setup/migrated-before';

let effects = 0;

@Workflow('partitioned')
class Partitioned implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.step('effect', () => ++effects);
    return ctx.waitForSignal<string>('finish');
  }
}

const JOURNAL = ['steps', 'signals', 'messages', 'history'];

/** The partitions of the journal tables, as `table:day` (day `legacy`, `standing` or yyyymmdd). */
const partitions = async (db: Db) =>
  (
    await db.query<{ name: string }>(
      `SELECT p.relname || ':' || regexp_replace(c.relname, '^[a-z]+_d?', '') AS name
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
       WHERE p.relnamespace = $1::regnamespace ORDER BY 1`,
      [db.schema],
    )
  ).map((r) => r.name);

/** yyyymmdd of the database's UTC day `offset` days from today. */
const day = async (db: Db, offset: number) =>
  (await db.query<{ d: string }>(`SELECT to_char(timezone('UTC', now())::date + $1::int, 'YYYYMMDD') AS d`, [offset]))[0].d;

describe('the journal partitioned by the day its run was created; retention drops a day', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let a: DurableTestApp;
  let b: DurableTestApp;
  const options = { retention: { completed: '1d', batchSize: 3, intervalMs: 3_600_000 } } as const;

  beforeAll(async () => {
    [a, b] = [await startApp({ schema, providers: [Partitioned], options }), await startApp({ schema, providers: [Partitioned], options })];
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await db.dropSchema();
  });

  it("writes a run's rows, all of them, into the partition of its day; the boot made today's and the next two days'", async () => {
    const names = await partitions(db);
    for (let offset = 0; offset <= 2; offset++) {
      const d = await day(db, offset);
      for (const table of JOURNAL) expect(names).toContain(`${table}:${d}`);
    }
    const run = await a.client.start(Partitioned, null);
    await a.signals.send(run.runId, 'notes', 'k1', 'hello');
    await a.signals.signal(run.runId, 'finish', 'done');
    expect(await run.result({ timeout: '5s' })).toBe('done');
    const today = await day(db, 0);
    for (const table of JOURNAL) {
      const held = await db.query<{ part: string }>(
        `SELECT DISTINCT tableoid::regclass::text AS part FROM durable.${table} WHERE run_id = $1`,
        [run.runId],
      );
      expect(held.map((h) => h.part)).toEqual([`${schema}.${table}_d${today}`]);
    }
  });

  it('every partition vacuums after 5% of its rows changed or were inserted, as the plain tables did: the days made at boot, history_standing, a day made later, and a day made without it', async () => {
    // A day made without it (by the function of before, while migration 21 replaced it) gets it at the next call.
    await db.query(`ALTER TABLE "${schema}".steps_d${await day(db, 1)} RESET (autovacuum_vacuum_scale_factor)`);
    await db.query(`SELECT "${schema}".make_journal_partitions(0, 4)`);
    const options = await db.query<{ name: string; options: string[] | null }>(
      `SELECT c.relname AS name, c.reloptions AS options
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
       WHERE p.relnamespace = $1::regnamespace AND c.relkind = 'r'`,
      [schema],
    );
    expect(options.map((o) => o.name)).toEqual(expect.arrayContaining(['history_standing', `steps_d${await day(db, 4)}`]));
    for (const { name, options: set } of options)
      expect([name, set]).toEqual([
        name,
        expect.arrayContaining(['autovacuum_vacuum_scale_factor=0.05', 'autovacuum_vacuum_insert_scale_factor=0.05']),
      ]);
  });

  it("a claim of runs of several days reads each run's journal from its own day's partitions (journals_of, one call per claim)", async () => {
    await db.query(createJournalPartitionsSql(tablesFor(schema), -2, -1));
    // Three runs of each of three days, due at once, each with a checkpoint and the signal it waits for.
    const seeded = [-2, -1, 0].flatMap((offset) => [0, 1, 2].map((n) => ({ id: `claimed-${-offset}-${n}`, daysAgo: -offset })));
    await db.query(
      `WITH r AS (SELECT * FROM unnest($1::text[], $2::int[]) AS r(id, days_ago)), ins AS (
         INSERT INTO durable.runs (id, workflow, status, input, wake_at, created_at, run_day)
         SELECT id, 'partitioned', 'pending', 'null', now(), now() - days_ago * interval '1 day', timezone('UTC', now() - days_ago * interval '1 day')::date
         FROM r RETURNING id, run_day
       ), step AS (
         INSERT INTO durable.steps (run_id, run_day, key, kind, outcome, result) SELECT id, run_day, 'effect', 'step', 'ok', '1' FROM ins
       )
       INSERT INTO durable.signals (run_id, run_day, name, payload) SELECT id, run_day, 'finish', to_jsonb('for ' || id)::text FROM ins`,
      [seeded.map((s) => s.id), seeded.map((s) => s.daysAgo)],
    );
    const before = effects;
    await eventually(
      async () => (await db.count('runs', `id LIKE 'claimed-%' AND status = 'completed'`)) === seeded.length,
      'the runs to end',
    );
    expect(effects).toBe(before); // every checkpoint was read: no step ran again
    const outputs = await db.query<{ id: string; output: string }>(
      `SELECT id, output FROM durable.runs WHERE id LIKE 'claimed-%' ORDER BY id`,
    );
    expect(outputs).toEqual(
      seeded.map((s) => ({ id: s.id, output: JSON.stringify(`for ${s.id}`) })).sort((x, y) => x.id.localeCompare(y.id)),
    );
    // Each run went through once: claimed with its journal, and ended (no failed attempt, no second claim).
    const events = await db.query<{ id: string; events: string[] }>(
      `SELECT run_id AS id, array_agg(event ORDER BY id) AS events FROM durable.history WHERE run_id LIKE 'claimed-%' GROUP BY run_id ORDER BY run_id`,
    );
    expect(new Set(events.map((e) => e.events.join()))).toEqual(new Set(['claimed,completed']));
    // At most two claims (one per instance) took the nine: one of them took runs of more than one day.
    const claims = await db.query<{ days: number }>(
      `SELECT count(DISTINCT r.run_day)::int AS days FROM durable.history h JOIN durable.runs r ON r.id = h.run_id
       WHERE h.event = 'claimed' AND h.run_id LIKE 'claimed-%' GROUP BY h.xmin::text`,
    );
    expect(Math.max(...claims.map((c) => c.days))).toBeGreaterThan(1);
  });

  it('drops the partitions of a day once no run of it is left, keeps a day a waiting run holds, and live runs go on meanwhile', async () => {
    await db.query(createJournalPartitionsSql(tablesFor(schema), -6, -1));
    const [gone, held, empty] = [await day(db, -4), await day(db, -3), await day(db, -5)];
    /** A run of `daysAgo`'s day, ended a day after it began (or not ended), with a journal row of each kind. */
    const seed = async (id: string, daysAgo: number, status: 'completed' | 'waiting') => {
      await db.query(
        `INSERT INTO durable.runs (id, workflow, status, input, created_at, run_day, finished_at)
         SELECT $1, 'partitioned', $2, 'null', at, timezone('UTC', at)::date, CASE WHEN $2 = 'completed' THEN at + interval '1 day' END
         FROM (SELECT now() - $3::int * interval '1 day' AS at) s`,
        [id, status, daysAgo],
      );
      const runDay = `(SELECT run_day FROM durable.runs WHERE id = $1)`;
      await db.query(
        `INSERT INTO durable.steps (run_id, run_day, key, kind, outcome, result) VALUES ($1, ${runDay}, 'effect', 'step', 'ok', '1')`,
        [id],
      );
      await db.query(`INSERT INTO durable.signals (run_id, run_day, name, payload) VALUES ($1, ${runDay}, 'x', '"x"')`, [id]);
      await db.query(
        `INSERT INTO durable.messages (run_id, run_day, channel, key, seq, payload) VALUES ($1, ${runDay}, 'c', 'k', 1, '"x"')`,
        [id],
      );
      await db.query(`INSERT INTO durable.history (run_id, run_day, event, actor) VALUES ($1, ${runDay}, 'started', 'seed')`, [id]);
    };
    for (let i = 0; i < 7; i++) await seed(`gone-${i}`, 4, 'completed');
    for (let i = 0; i < 2; i++) await seed(`held-done-${i}`, 3, 'completed');
    await seed('held-waiting', 3, 'waiting');
    expect(await partitions(db)).toEqual(expect.arrayContaining(JOURNAL.flatMap((t) => [`${t}:${gone}`, `${t}:${held}`, `${t}:${empty}`])));

    const live = await Promise.all(Array.from({ length: 6 }, () => a.client.start(Partitioned, null)));
    const deleted = await Promise.all([a.get(RetentionService).cleanup(), b.get(RetentionService).cleanup()]);
    const rest = await a.get(RetentionService).cleanup(); // whatever the loser of the lock left
    expect(deleted.reduce((sum, n) => sum + n, 0) + rest).toBe(9);

    const names = await partitions(db);
    for (const table of JOURNAL) {
      expect(names).not.toContain(`${table}:${gone}`);
      expect(names).not.toContain(`${table}:${empty}`);
      expect(names).toContain(`${table}:${held}`);
      // The waiting run's journal is whole; the ended runs of its day are gone from runs (their rows wait for the day).
      expect(await db.count(table, 'run_id = $1', ['held-waiting'])).toBe(1);
    }
    expect(await db.count('runs', `id LIKE 'gone-%' OR id LIKE 'held-done-%'`)).toBe(0);
    expect(await db.count('runs', `id = 'held-waiting'`)).toBe(1);
    for (const run of live) await a.signals.signal(run.runId, 'finish', 'ok');
    for (const run of live) expect(await run.result({ timeout: '5s' })).toBe('ok');

    // Once the waiting run has ended and aged too, its day goes.
    await db.query(`UPDATE durable.runs SET status = 'completed', finished_at = now() - interval '2 days' WHERE id = 'held-waiting'`);
    await a.get(RetentionService).cleanup();
    expect((await partitions(db)).filter((n) => n.endsWith(`:${held}`))).toEqual([]);
  });

  it('a detach left half-done (interrupted, or detached and not dropped) does not stop the next cleanup: it finishes it and drops the other days', async () => {
    await db.query(createJournalPartitionsSql(tablesFor(schema), -9, -1));
    const [older, newer, undropped] = [await day(db, -9), await day(db, -8), await day(db, -7)];
    // A DETACH … CONCURRENTLY of the newer day cut off while it waited for a reader: Postgres leaves it pending, and
    // takes no other detach of that table until it is finished; the older day's partition comes first by name.
    const reader = new Client(databaseUrl());
    await reader.connect();
    await reader.query('BEGIN');
    await reader.query(`SELECT count(*) FROM "${schema}".messages`);
    await db.query(`SET statement_timeout = '300ms'`);
    await expect(db.query(`ALTER TABLE durable.messages DETACH PARTITION durable.messages_d${newer} CONCURRENTLY`)).rejects.toThrow(
      /statement timeout/,
    );
    await db.query('RESET statement_timeout');
    await reader.query('COMMIT');
    await reader.end();
    expect(
      await db.query(`SELECT inhdetachpending AS pending FROM pg_inherits WHERE inhrelid = $1::regclass`, [
        `"${schema}".messages_d${newer}`,
      ]),
    ).toEqual([{ pending: true }]);
    // A detach whose drop never came (the process ended between the two): a table no longer in the journal.
    await db.query(`ALTER TABLE durable.steps DETACH PARTITION durable.steps_d${undropped}`);
    // One of a day a run still holds (an operator's archive, say) is not retention's to drop.
    const kept = await day(db, -6);
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, run_day) VALUES ('holds-its-day', 'partitioned', 'waiting', 'null', $1::date)`,
      [kept],
    );
    await db.query(`ALTER TABLE durable.steps DETACH PARTITION durable.steps_d${kept}`);

    await a.get(RetentionService).cleanup();
    const names = await partitions(db);
    for (const d of [older, newer, undropped]) expect(names.filter((n) => n.endsWith(`:${d}`))).toEqual([]);
    expect(await db.query(`SELECT to_regclass($1) AS left`, [`"${schema}".steps_d${undropped}`])).toEqual([{ left: null }]);
    expect(await db.query(`SELECT to_regclass($1)::text AS left`, [`"${schema}".steps_d${kept}`])).toEqual([
      { left: `${schema}.steps_d${kept}` },
    ]);
    await db.query(`DROP TABLE durable.steps_d${kept}`);
    await db.query(`DELETE FROM durable.runs WHERE id = 'holds-its-day'`);
  });

  it("never drops yesterday's or today's partitions, even without a run of them", async () => {
    await a.get(RetentionService).cleanup();
    const names = await partitions(db);
    for (const offset of [-1, 0]) {
      const d = await day(db, offset);
      for (const table of JOURNAL) expect(names).toContain(`${table}:${d}`);
    }
  });
});

describe('the migration from the unpartitioned journal', () => {
  const schema = uniqueSchema('mp');
  const db = new Db(schema);
  afterAll(async () => {
    await db.dropSchema();
  });

  it('keeps every row as the legacy partition, and the runs from before go on from their checkpoints; their journal is deleted with them, then the legacy partition is dropped', async () => {
    // The schema as the version before left it: every migration before the partitioning.
    const pending = await migratedBefore(schema, 'PartitionedJournal1732900000013');
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wait, wait_kind, wait_name, wake_at)
       VALUES ('old-waiting', 'partitioned', 'waiting', 'null', '{"kind":"signal","name":"finish"}', 'signal', 'finish', NULL),
              ('old-done', 'partitioned', 'completed', 'null', NULL, NULL, NULL, NULL)`,
    );
    await db.query(`UPDATE durable.runs SET finished_at = now() - interval '3 days' WHERE id = 'old-done'`);
    await db.query(
      `INSERT INTO durable.steps (run_id, key, kind, outcome, result) VALUES ('old-waiting', 'effect', 'step', 'ok', '41'), ('old-done', 'effect', 'step', 'ok', '1')`,
    );
    await db.query(
      `INSERT INTO durable.history (run_id, event, actor) VALUES ('old-waiting', 'started', 'old'), ('old-done', 'started', 'old'), ('schedule:nightly', 'schedule-paused', 'ops')`,
    );

    expect(await runDurableMigrations({ connection: databaseUrl(), schema })).toEqual(pending);
    expect(await db.count('history')).toBe(3);
    const placed = await db.query(`SELECT run_id, tableoid::regclass::text AS part FROM durable.history ORDER BY run_id`);
    expect(placed).toEqual([
      { run_id: 'old-done', part: `${schema}.history_legacy` },
      { run_id: 'old-waiting', part: `${schema}.history_legacy` },
      { run_id: 'schedule:nightly', part: `${schema}.history_standing` },
    ]);

    effects = 0;
    const app = await startApp({ schema, providers: [Partitioned], options: { retention: { completed: '1d', intervalMs: 3_600_000 } } });
    try {
      await app.signals.signal('old-waiting', 'finish', 'late');
      await eventually(
        async () => (await db.query(`SELECT status FROM durable.runs WHERE id = 'old-waiting'`))[0].status === 'completed',
        'the old run to end',
      );
      expect(effects).toBe(0); // its checkpoint, from before the migration, was read: the step did not run again
      expect(await db.count('history', `run_id = 'old-waiting'`)).toBeGreaterThan(2);
      expect(await db.count('history', `run_id = 'old-waiting' AND tableoid::regclass::text LIKE '%legacy'`)).toBe(
        await db.count('history', `run_id = 'old-waiting'`),
      );

      await app.get(RetentionService).cleanup();
      expect(await db.count('steps', `run_id = 'old-done'`)).toBe(0); // a legacy run's journal goes with it, row by row
      expect(await partitions(db)).toContain('steps:legacy'); // old-waiting still holds the legacy day
      await db.query(`UPDATE durable.runs SET finished_at = now() - interval '2 days' WHERE id = 'old-waiting'`);
      await app.get(RetentionService).cleanup();
      const names = await partitions(db);
      expect(names.filter((n) => n.endsWith(':legacy'))).toEqual([]);
      expect(names).toContain('history:standing');
      expect(await db.count('history', `run_id = 'schedule:nightly'`)).toBe(1);
    } finally {
      await app.close();
    }
  });
});
