import { z } from 'zod';
import { defineSignal, DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { DurableDatabase } from 'nestjs-durable/persistence/durable-database';
import { Db, DurableTestApp, startApp, uniqueSchema } from '../setup/durable-app';

const Approval = defineSignal('approval', z.object({ by: z.string() }));

@Workflow('bk-scale', { signals: [Approval] })
class Scaled implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal(Approval);
  }
}

const RUNS = 1_000_000;

jest.setTimeout(240_000);

describe('business keys at scale: 1M runs, 5M keys, a lookup is an index probe', () => {
  const schema = uniqueSchema('bks');
  const db = new Db(schema);
  let app: DurableTestApp;
  beforeAll(async () => {
    app = await startApp({ schema, providers: [Scaled], options: { worker: { enabled: false } } });
    // Five keys per run: one unique (orderId), one shared by 20 (customer), three shared by many.
    await db.query(
      `INSERT INTO durable.runs (id, workflow, status, input, wait, wait_kind, wait_name, keys)
       SELECT 'run-' || i, 'bk-scale', CASE WHEN i % 100 = 0 THEN 'waiting' ELSE 'completed' END, 'null',
              CASE WHEN i % 100 = 0 THEN '{"kind":"signal","name":"approval"}'::jsonb END,
              CASE WHEN i % 100 = 0 THEN 'signal' END, CASE WHEN i % 100 = 0 THEN 'approval' END,
              jsonb_build_object('orderId', 'A-' || i, 'customer', 'c-' || (i % 50000), 'region', 'r' || (i % 20),
                                 'sku', 's' || (i % 1000), 'channel', 'web')
       FROM generate_series(1, $1) i`,
      [RUNS],
    );
    await db.query(`ANALYZE durable.runs`);
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  /** The statements the library sends while `act` runs, each with its parameters. */
  const statementsOf = async (act: () => Promise<unknown>) => {
    const durable = app.get(DurableDatabase);
    const sent: Array<{ sql: string; params: unknown[] }> = [];
    const original = durable.query.bind(durable);
    const spy = jest.spyOn(durable, 'query').mockImplementation(((sql: string, params: unknown[] = [], manager?: never) => {
      sent.push({ sql, params });
      return original(sql, params, manager);
    }) as never);
    try {
      await act();
    } finally {
      spy.mockRestore();
    }
    return sent;
  };
  /** The plan of a statement as the library sent it: every node's type and index. */
  const planOf = async ({ sql, params }: { sql: string; params: unknown[] }) => {
    const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql.replaceAll(`"${schema}".`, 'durable.')}`, params);
    const nodes: Array<{ type: string; relation?: string; index?: string }> = [];
    const walk = (node: Record<string, any>) => {
      nodes.push({ type: node['Node Type'], relation: node['Relation Name'], index: node['Index Name'] });
      for (const child of node.Plans ?? []) walk(child);
    };
    walk((row['QUERY PLAN'] as Array<{ Plan: Record<string, any> }>)[0].Plan);
    return nodes;
  };
  const probesKeys = (nodes: Array<{ type: string; relation?: string; index?: string }>) => {
    expect(nodes).toContainEqual(expect.objectContaining({ index: 'runs_keys_idx' }));
    expect(nodes.filter((n) => n.type === 'Seq Scan' && n.relation === 'runs')).toEqual([]);
  };

  it('listRuns by one key and by two, and signalByKeys, are probes of runs_keys_idx, not scans of runs', async () => {
    const [byOne] = await statementsOf(async () => {
      expect((await app.client.listRuns({ keys: { orderId: 'A-500' } })).runs.map((r) => r.runId)).toEqual(['run-500']);
    });
    probesKeys(await planOf(byOne));

    const [byTwo] = await statementsOf(async () => {
      expect((await app.client.listRuns({ keys: { customer: 'c-100', region: 'r0' } })).runs).toHaveLength(20);
    });
    probesKeys(await planOf(byTwo));

    const sent = await statementsOf(async () => {
      const deliveries = await app.signals.signalByKeys({ customer: 'c-100' }, Approval, { by: 'ops' });
      // Of the 20 runs of customer c-100, those whose number is a multiple of 100 wait (the rest completed).
      expect(deliveries.map((d) => d.runId).sort()).toEqual(
        Array.from({ length: 20 }, (_, k) => 100 + 50_000 * k)
          .filter((i) => i % 100 === 0)
          .map((i) => `run-${i}`)
          .sort(),
      );
    });
    const delivery = sent.find((s) => s.sql.includes('keys @>'))!;
    probesKeys(await planOf(delivery));
  });

  it('more than 1,000 matches refuse the whole delivery, nothing recorded; 1,000 are delivered whole', async () => {
    const [signals, history] = [await db.count('signals'), await db.count('history')];
    // Every waiting run (a multiple of 100) is in region r0: 10,000 of them.
    await expect(app.signals.signalByKeys({ region: 'r0' }, Approval, { by: 'ops' })).rejects.toThrow(
      /signalByKeys: more than 1000 open runs have the keys \{"region":"r0"\}; nothing was delivered. Narrow the keys/,
    );
    expect([await db.count('signals'), await db.count('history')]).toEqual([signals, history]);
    // Narrowed to sku s0 (a multiple of 1,000): exactly 1,000 runs, every one of them delivered.
    const deliveries = await app.signals.signalByKeys({ region: 'r0', sku: 's0' }, Approval, { by: 'ops' });
    expect(deliveries).toHaveLength(1_000);
    expect(deliveries.every((d) => d.accepted)).toBe(true);
    expect(await db.count('signals')).toBe(signals + 1_000);
  });
});
