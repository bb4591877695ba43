import { DashboardService } from 'nestjs-durable/dashboard/dashboard.service';
import { STATS_EXACT_UP_TO } from 'nestjs-durable/persistence/dashboard.repository';
import { Db, DurableTestApp, startApp, uniqueSchema } from '../setup/durable-app';

describe('dashboard stats: a cost that does not grow with the table', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({ schema, options: { dashboard: { auth: { insecureNoAuth: true } } } });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('counts are exact up to the cap and estimates past it, said so; the oldest waiting run is the one that waits longest', async () => {
    const past = STATS_EXACT_UP_TO + 2_000;
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, finished_at) SELECT 'done-' || i, 'w', 'completed', 'null', now() FROM generate_series(1, $1) i`,
      [past],
    );
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wait, wait_kind, wait_name)
       SELECT 'waits-' || i, 'w', 'waiting', 'null', jsonb_build_object('kind', 'signal', 'name', 'go', 'since', now() - i * interval '1 minute'), 'signal', 'go'
       FROM generate_series(1, 3) i`,
    );
    await db.query(`ANALYZE durable.runs`);

    const stats = await t.get(DashboardService).stats();
    expect(stats.estimated).toEqual({ byStatus: ['completed'], waitingByKind: [], overdue: false });
    expect(stats.byStatus.completed).toBeGreaterThanOrEqual(STATS_EXACT_UP_TO);
    expect(Math.abs(stats.byStatus.completed - past) / past).toBeLessThan(0.2);
    expect(stats.byStatus).toMatchObject({ waiting: 3, pending: 0, running: 0, failed: 0, cancelled: 0 });
    expect(stats.waitingByKind).toMatchObject({ signal: 3, sleep: 0 });
    expect(stats.oldestWaiting).toMatchObject({ runId: 'waits-3' });
  });
});
