import { runDurableMigrations } from 'nestjs-durable';
import { ADMISSION_PLANS_SQL, admitQueuedSql, promoteDueSql } from 'nestjs-durable/persistence/sql/admit-queued.sql';
import { mendSlotsSql } from 'nestjs-durable/persistence/sql/mend-queue-slots.sql';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { databaseUrl, Db, uniqueSchema } from '../setup/durable-app';
import { planNodes } from '../setup/plans';

const FINISHED = 20_000;
const PENDING = 2_400;
const HEAD_DEPTH = 100;

/**
 * The admission statement runs the generic plan its connection keeps (ADMISSION_PLANS_SQL), not a
 * custom plan per call: that plan must read only the runs admission needs, in every branch the data can
 * take. The finished runs lie first in the table, so a sequential scan anywhere reads all of them.
 */
describe("admission's kept (generic) plan reads the queue's runs through its indexes, in every branch", () => {
  const schema = uniqueSchema('admitplan');
  const db = new Db(schema);
  const t = tablesFor(schema);

  beforeAll(async () => {
    await runDurableMigrations({ connection: databaseUrl(), schema });
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, finished_at) SELECT 'done-' || g, 'w', 'completed', '1', now() FROM generate_series(1, ${FINISHED}) g`,
    );
    // Two crowded partitions hold the head of the queue's order; behind them 100 partitions of 20 runs
    // and 200 runs with no partition.
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue, partition_key)
       SELECT 'crowd-' || g, 'w', 'pending', '1', now() - interval '1 day' + g * interval '1 millisecond', 'q', 'crowd-' || (g % 2)
       FROM generate_series(1, 200) g
       UNION ALL
       SELECT 'keyed-' || g, 'w', 'pending', '1', now() - interval '1 hour' + g * interval '1 millisecond', 'q', 'tenant-' || (g % 100)
       FROM generate_series(1, 2000) g
       UNION ALL
       SELECT 'unkeyed-' || g, 'w', 'pending', '1', now() - interval '1 hour' + g * interval '1 millisecond', 'q', NULL
       FROM generate_series(1, 200) g`,
    );
    await db.query(`INSERT INTO ${t.queueSlots} (queue, slot) SELECT 'q', n FROM generate_series(1, 64) n`);
    await db.query(`ANALYZE ${t.runs}`);
    await db.query(`PREPARE admit(text, int, int, int, bigint, int, text[], text, int, int) AS ${admitQueuedSql(t)}`);
  });
  afterAll(() => db.dropSchema());

  /** The most rows any scan of runs read, and the runs admitted, for these limits (rolled back). */
  const admit = async (limits: string) => {
    const execute = `EXECUTE admit('q', 64, ${limits}, 64, ARRAY['w'], 'owner', 30000, ${HEAD_DEPTH})`;
    await db.query(`BEGIN; ${ADMISSION_PLANS_SQL}`);
    try {
      const nodes = await planNodes(db, `EXPLAIN (ANALYZE, FORMAT JSON) ${execute}`);
      const scans = nodes.filter((n) => n.relation === 'runs' && n.type.endsWith('Scan'));
      return { mostRead: Math.max(...scans.map((n) => n.rowsRead!)), seqScans: scans.filter((n) => n.type === 'Seq Scan' && n.rowsRead) };
    } finally {
      await db.query('ROLLBACK');
    }
  };

  it('reads through the queue indexes only, with a concurrency alone, a partition limit the head meets, one the crowded head fills, a rate limit', async () => {
    const cases = {
      'a concurrency alone': 'NULL, NULL, NULL',
      'a partition limit the head meets (the head is enough)': '100, NULL, NULL',
      'a partition limit the crowded head fills (partitions one by one, and the runs with none)': '1, NULL, NULL',
      'a rate limit': 'NULL, 10, 60000',
    };
    const reads: Record<string, { seqScans: number; beyondHead: boolean }> = {};
    for (const [name, limits] of Object.entries(cases)) {
      const { mostRead, seqScans } = await admit(limits);
      // Each read is a range of an index, bounded by what it looks for: the head of the queue's order
      // (at most HEAD_DEPTH), a partition's head, the skip scan's steps, and the runs with no partition
      // key by their own range (not in the queue's order through the keyed runs before them). Never the
      // finished runs.
      reads[name] = { seqScans: seqScans.length, beyondHead: mostRead > HEAD_DEPTH };
    }
    expect(reads).toEqual(Object.fromEntries(Object.keys(cases).map((name) => [name, { seqScans: 0, beyondHead: false }])));
  });

  it('admits the runs the limits allow: one per partition under a limit of 1, the crowded two among them', async () => {
    await db.query(`BEGIN; ${ADMISSION_PLANS_SQL}`);
    try {
      const rows = await db.query<{ id: string }>(`EXECUTE admit('q', 64, 1, NULL, NULL, 64, ARRAY['w'], 'owner', 30000, ${HEAD_DEPTH})`);
      const admitted = await db.query<{ partition_key: string | null; n: number }>(
        `SELECT partition_key, count(*)::int AS n FROM ${t.runs} WHERE id = ANY($1) GROUP BY partition_key`,
        [rows.map((r) => r.id)],
      );
      expect(rows).toHaveLength(64);
      expect(admitted.filter((p) => p.partition_key !== null && p.n > 1)).toEqual([]);
      expect(admitted.map((p) => p.partition_key)).toEqual(expect.arrayContaining(['crowd-0', 'crowd-1']));
    } finally {
      await db.query('ROLLBACK');
    }
  });

  it('the statements sent before it in its transaction, the slots mending and the promotion of due runs, read through indexes under its plan mode too', async () => {
    const statements: Array<[string, string, string, string]> = [
      ['mend: slots freed', mendSlotsSql(t)[0], '(text, int)', "('q', 64)"],
      ['mend: slots given', mendSlotsSql(t)[1], '(text, int)', "('q', 64)"],
      ['promote', promoteDueSql(t), '(text[], int)', "(ARRAY['q'], 1000)"],
    ];
    await db.query(`BEGIN; ${ADMISSION_PLANS_SQL}`);
    try {
      // Runs the statistics never saw: running ones holding slots, running ones holding none, waiting ones whose time came.
      await db.query(
        `INSERT INTO ${t.runs} (id, workflow, status, input, queue, wake_at)
         SELECT 'run-' || g, 'w', 'running', '1', 'q', now() + interval '1 minute' FROM generate_series(1, 60) g
         UNION ALL
         SELECT 'due-' || g, 'w', 'waiting', '1', 'q', now() - interval '1 second' FROM generate_series(1, 30) g`,
      );
      await db.query(`UPDATE ${t.queueSlots} SET holder = 'run-' || slot WHERE queue = 'q' AND slot <= 40`);
      const reads: Record<string, { seqScans: number; finishedRead: boolean }> = {};
      for (const [i, [name, sql, types, args]] of statements.entries()) {
        await db.query(`PREPARE before_admit_${i}${types} AS ${sql}`);
        const nodes = await planNodes(db, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE before_admit_${i}${args}`);
        await db.query(`DEALLOCATE before_admit_${i}`);
        const scans = nodes.filter((n) => n.relation === 'runs' && n.type.endsWith('Scan'));
        reads[name] = {
          seqScans: scans.filter((n) => n.type === 'Seq Scan').length,
          finishedRead: scans.some((n) => n.rowsRead! >= FINISHED),
        };
      }
      expect(reads).toEqual(Object.fromEntries(statements.map(([name]) => [name, { seqScans: 0, finishedRead: false }])));
      // They did their work: the 20 running runs without a slot got one, the due runs are pending.
      expect(await db.count('queue_slots', `queue = 'q' AND holder IS NOT NULL`)).toBe(60);
      expect(await db.count('runs', `id LIKE 'due-%' AND status = 'pending'`)).toBe(30);
    } finally {
      await db.query('ROLLBACK');
    }
  });
});

/** What the admission statement admits, run as the library runs it (generic plan, in its own transaction, rolled back). */
describe('admission admits what the limits allow, and no more', () => {
  const schema = uniqueSchema('admitlimits');
  const db = new Db(schema);
  const t = tablesFor(schema);

  beforeAll(async () => {
    await runDurableMigrations({ connection: databaseUrl(), schema });
    await db.query(`PREPARE admit(text, int, int, int, bigint, int, text[], text, int, int) AS ${admitQueuedSql(t)}`);
  });
  afterAll(() => db.dropSchema());

  /** The runs of each partition executing after one admission of `queue` with these limits and `ask`. */
  const runningAfterAdmission = async (queue: string, limits: string, ask: number) => {
    await db.query(`BEGIN; ${ADMISSION_PLANS_SQL}`);
    try {
      await db.query(`EXECUTE admit('${queue}', ${limits}, ${ask}, ARRAY['w'], 'owner', 30000, ${HEAD_DEPTH})`);
      const rows = await db.query<{ partition_key: string; n: number }>(
        `SELECT partition_key, count(*)::int AS n FROM ${t.runs} WHERE queue = $1 AND status = 'running' GROUP BY partition_key ORDER BY partition_key`,
        [queue],
      );
      return Object.fromEntries(rows.map((r) => [r.partition_key, r.n]));
    } finally {
      await db.query('ROLLBACK');
    }
  };

  it('a partition limit holds when runs tie on priority and due time: one run of each tenant, whichever of its tied runs each read of the order meets first', async () => {
    // Tenants p and r each have two runs due at one instant, inserted in opposite orders (an index
    // returns ties in insertion order, the head numbers them by id); tenant a's 1,200 later runs fill
    // the head, so each partition's own head is read too.
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue, partition_key)
       SELECT id, 'w', 'pending', '1', now() - interval '1 day', 'ties', left(id, 1) FROM unnest(ARRAY['p-2', 'p-1', 'r-1', 'r-2']) id
       UNION ALL
       SELECT 'a-' || g, 'w', 'pending', '1', now() - interval '1 hour' + g * interval '1 millisecond', 'ties', 'a' FROM generate_series(1, 1200) g`,
    );
    await db.query(`INSERT INTO ${t.queueSlots} (queue, slot) SELECT 'ties', n FROM generate_series(1, 10) n`);
    await db.query(`ANALYZE ${t.runs}`);
    expect(await runningAfterAdmission('ties', '10, 1, NULL, NULL', 10)).toEqual({ a: 1, p: 1, r: 1 });
  });

  it("a queue with no concurrency admits up to the ask, however many of its runs execute elsewhere (the ask is this instance's room, not the queue's)", async () => {
    await db.query(
      `INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, queue, partition_key)
       SELECT 'elsewhere-' || g, 'w', 'running', '1', now() + interval '1 minute', 'open', 'busy-' || g FROM generate_series(1, 3) g
       UNION ALL
       SELECT 'open-' || g, 'w', 'pending', '1', now() - interval '1 minute', 'open', 'idle-' || g FROM generate_series(1, 5) g`,
    );
    expect(await runningAfterAdmission('open', 'NULL, 1, NULL, NULL', 2)).toMatchObject({ 'idle-1': 1, 'idle-2': 1 });
    expect(await runningAfterAdmission('open', 'NULL, NULL, 10, 60000', 2)).toMatchObject({ 'idle-1': 1, 'idle-2': 1 });
  });
});
