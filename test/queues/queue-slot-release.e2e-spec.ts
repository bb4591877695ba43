import { DurableWorkflow, Workflow } from 'nestjs-durable';
import { finishRunSql } from 'nestjs-durable/persistence/sql/finish-run.sql';
import { tablesFor } from 'nestjs-durable/persistence/tables';
import { Db, DurableTestApp, startApp, uniqueSchema } from '../setup/durable-app';
import { plannedOn } from '../setup/plans';

@Workflow('wide-queue-noop')
class Noop implements DurableWorkflow<null, number> {
  async run() {
    return 1;
  }
}

describe("a queued run's end gives its slot back by its holder", () => {
  const schema = uniqueSchema('slots');
  const db = new Db(schema);
  let app: DurableTestApp;

  beforeAll(async () => {
    app = await startApp({ schema, providers: [Noop], options: { queues: { wide: { concurrency: 2_000 } } } });
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  it("through the holder index, not a read of the queue's 2,000 slots, and the slot is free again", async () => {
    await db.query(`ANALYZE durable.queue_slots`);
    await db.query(`SET plan_cache_mode = force_generic_plan`);
    await db.query(`PREPARE queued_end AS ${finishRunSql(tablesFor(schema))}`);
    // Every index the release reads (an index scan, or a bitmap's) is the holder's; no scan of the table's rows.
    const released = (await plannedOn(db, 'queued_end', `('x', 1, 'completed', '1', null, 'w', null, 'c', null, 'q')`)).filter(
      (n) => n.cte === 'CTE released',
    );
    expect([...new Set(released.flatMap((n) => (n.index ? [n.index] : [])))]).toEqual(['queue_slots_holder_idx']);
    expect(released.filter((n) => n.type === 'Seq Scan')).toEqual([]);

    const run = await app.client.start(Noop, null, { queue: 'wide' });
    expect(await run.result()).toBe(1);
    expect(await db.count('queue_slots', `queue = 'wide' AND holder IS NOT NULL`)).toBe(0);
    expect(await db.count('queue_slots', `queue = 'wide'`)).toBe(2_000);
  });
});
