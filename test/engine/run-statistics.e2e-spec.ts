import { DurableWorkflow, Workflow } from 'nestjs-durable';
import { finishRunSql, finishRunsSql } from 'nestjs-durable/persistence/sql/finish-run.sql';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { RunStatisticsService } from 'nestjs-durable/worker/run-statistics.service';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';
import { plannedOn } from '../setup/plans';

@Workflow('statistics-noop')
class Noop implements DurableWorkflow<null, number> {
  async run() {
    return 1;
  }
}

describe('the runs table statistics, gathered while the table is young', () => {
  const schema = uniqueSchema('stats');
  const db = new Db(schema);
  let app: DurableTestApp;

  beforeAll(async () => {
    app = await startApp({ schema, providers: [Noop] });
    // Autovacuum's analyses would make the sessions plan again too: off for this table, so only the library's do.
    await db.query(`ALTER TABLE durable.runs SET (autovacuum_enabled = false)`);
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  const counters = async () => {
    const [row] = await db.query<{ mods: string; analyzed: string }>(
      `SELECT pg_stat_get_mod_since_analyze('durable.runs'::regclass) AS mods, pg_stat_get_analyze_count('durable.runs'::regclass) AS analyzed`,
    );
    return { mods: Number(row.mods), analyzed: Number(row.analyzed) };
  };
  /** Rows as a live table holds them: mostly finished runs, one in fifty running. */
  const insertRuns = (from: number, to: number) =>
    db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, output, finished_at)
       SELECT 'seeded-' || g, 'statistics-noop', s.status, 'null', '1', CASE WHEN s.status = 'completed' THEN now() END
       FROM generate_series($1::int, $2::int) g, LATERAL (SELECT CASE WHEN g % 50 = 0 THEN 'running' ELSE 'completed' END AS status) s`,
      [from, to],
    );
  const planned = (name: string, args: string) => plannedOn(db, name, args, 'runs');
  const plannedEnds = () => planned('ends', `('[]', 'c')`);
  /** How the lone end's update finds its run. */
  const lonePlannedOn = async () =>
    (await planned('lone_end', `('x', 1, 'completed', '1', null, 'w', null, 'c', null)`)).find((n) => n.cte === 'CTE done' && n.index)
      ?.index;

  it('are left to autovacuum below a thousand changed rows', async () => {
    await db.query(`SET plan_cache_mode = force_generic_plan`);
    await db.query(`PREPARE ends (jsonb, text) AS ${finishRunsSql(tablesFor(schema), { parentless: true, unqueued: true })}`);
    await db.query(`PREPARE lone_end AS ${finishRunSql(tablesFor(schema), { parentless: true, unqueued: true })}`);
    // Planned for an empty table: the batch finds its runs by a sequential scan, the cheapest there.
    expect((await plannedEnds()).filter((n) => n.type === 'Seq Scan')).not.toEqual([]);
    await insertRuns(1, 600);
    await eventually(async () => (await counters()).mods >= 600, 'the inserts to reach the statistics counters', 20_000);
    expect(await app.get(RunStatisticsService).refresh()).toBe(false);
    expect((await counters()).analyzed).toBe(0);
  });

  it('are gathered once the table has changed by more rows than it held, and ends prepared while it was empty are then planned on the primary key', async () => {
    await insertRuns(601, 6_000);
    await eventually(async () => (await counters()).analyzed >= 1, 'the instance to analyze the runs table', 20_000);
    expect((await counters()).mods).toBeLessThan(1_000);

    // The statistics changed, so the plan the session kept is made again, for the table as it is now
    // (looked at until the analysis has committed: its counter moves first).
    const nodes = await eventually(async () => {
      const planned = await plannedEnds();
      return !planned.some((n) => n.type === 'Seq Scan') && planned;
    }, 'the prepared batch of ends to be planned again');
    expect(nodes.filter((n) => n.index === 'runs_pkey').length).toBeGreaterThanOrEqual(2); // the lock, the update
    // A lone end reaches its run through the primary key too, which ties with the status index on an empty table.
    expect(await lonePlannedOn()).toBe('runs_pkey');
  });

  it('are not gathered again until the table has changed by as many rows as it holds', async () => {
    const { analyzed } = await counters();
    await insertRuns(6_001, 7_500);
    await eventually(async () => (await counters()).mods >= 1_500, 'the inserts to reach the statistics counters', 20_000);
    expect(await app.get(RunStatisticsService).refresh()).toBe(false);
    expect((await counters()).analyzed).toBe(analyzed);
    // And the workflows run as ever.
    expect(await (await app.client.start(Noop, null)).result()).toBe(1);
  });
});
