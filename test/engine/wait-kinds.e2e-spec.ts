import { WAIT_KIND_NAMES, WAIT_KINDS, WakeSource } from 'nestjs-durable/wait-kinds/wait-kind.registry';
import { Db, DurableTestApp, startApp, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'test-token-0123456789abcdef';
const WAKE_SOURCES: WakeSource[] = ['signal', 'channel', 'child-end', 'time', 'slot'];

describe('the registry of wait kinds', () => {
  const schema = uniqueSchema('wk');
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    t = await startApp({ schema, listen: true, options: { dashboard: { auth: { token: TOKEN } } } });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it('every registered kind declares its label, wake sources, resume, test clock and instants', () => {
    expect(WAIT_KIND_NAMES).toEqual(expect.arrayContaining(['signal', 'sleep', 'channel', 'child', 'retry']));
    for (const kind of WAIT_KIND_NAMES) {
      const declared = WAIT_KINDS[kind];
      expect(declared.label).toMatch(/\S/);
      expect(declared.wakes.length).toBeGreaterThan(0);
      for (const source of declared.wakes) expect(WAKE_SOURCES).toContain(source);
      expect(['finish', 'reinvoke']).toContain(declared.resume);
      expect(typeof declared.clock).toBe('boolean');
      // A kind woken by time says which instant of its reason is that time; one without never is.
      expect(Object.keys(declared.times).length > 0).toBe(declared.wakes.includes('time'));
    }
  });

  it('the CHECK on runs.wait_kind allows exactly the registered kinds (a new kind needs its migration)', async () => {
    const [row] = await db.query<{ def: string }>(
      `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
       WHERE n.nspname = $1 AND c.conname = 'runs_wait_kind_check'`,
      [schema],
    );
    const allowed = [...row.def.matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(allowed.sort()).toEqual([...WAIT_KIND_NAMES].sort());
  });

  it('the database refuses a run parked on a kind the registry does not know', async () => {
    await db.query(`INSERT INTO durable.runs (id, workflow, status) VALUES ('unknown-kind', 'w', 'pending')`);
    await expect(db.query(`UPDATE durable.runs SET status = 'waiting', wait_kind = 'nap' WHERE id = 'unknown-kind'`)).rejects.toThrow(
      /runs_wait_kind_check/,
    );
    for (const kind of WAIT_KIND_NAMES)
      await db.query(`UPDATE durable.runs SET status = 'waiting', wait_kind = $1 WHERE id = 'unknown-kind'`, [kind]);
  });

  it('the REST filter waitingFor accepts every registered kind and refuses any other with 400', async () => {
    const list = (query: string) => fetch(`${t.url}/durable/api/runs?${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    for (const kind of WAIT_KIND_NAMES) expect({ kind, status: (await list(`waitingFor=${kind}`)).status }).toEqual({ kind, status: 200 });
    const refused = await list('waitingFor=nap');
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toContain(WAIT_KIND_NAMES.join(', '));
  });
});
