import { Logger } from '@nestjs/common';
import { DurableModule } from 'nestjs-durable';
import { NapLong, operatorWorkflows } from '../fixtures/operator.workflows';
import { DurableTestApp, eventually, startApp } from '../setup/durable-app';
import { ReplicatedCluster, startReplicatedCluster } from '../setup/replica';

const TOKEN = 'replica-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

describe('dashboard.readConnection: the dashboard reads from a streaming replica, and acts on the primary', () => {
  let cluster: ReplicatedCluster;
  let t: DurableTestApp;
  beforeAll(async () => {
    cluster = await startReplicatedCluster();
    t = await startApp({
      schema: 'durable',
      providers: operatorWorkflows,
      listen: true,
      options: {
        connection: cluster.primaryUrl,
        dashboard: { auth: { token: TOKEN }, readConnection: cluster.replicaUrl },
        // One admission an hour: the second run of it stays pending.
        queues: { hourly: { rateLimit: { limit: 1, period: '1h' } } },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  const get = (path: string) => fetch(`${t.url}/durable/api${path}`, { headers: auth });

  it('lists and shows what the replica has replayed; its actions reach the primary even while the replica lags', async () => {
    const first = await t.client.start(NapLong, null);
    await eventually(async () => (await get(`/runs/${first.runId}`)).status === 200, 'the replica to replay the first run');

    await cluster.pauseReplay();
    const second = await t.client.start(NapLong, null);
    expect((await t.client.getRun(second.runId)).runId).toBe(second.runId); // the primary has it
    expect((await get(`/runs/${second.runId}`)).status).toBe(404); // the paused replica has not
    const listed = (await (await get('/runs')).json()) as { runs: Array<{ runId: string }> };
    expect(listed.runs.map((r) => r.runId)).toEqual([first.runId]);
    const cancelled = await fetch(`${t.url}/durable/api/runs/${second.runId}/cancel`, {
      method: 'POST',
      headers: { ...auth, 'x-durable-request': '1' },
    });
    expect(cancelled.status).toBe(200);
    expect((await t.client.getRun(second.runId)).status).toBe('cancelled');

    await cluster.resumeReplay();
    await eventually(async () => {
      const response = await get(`/runs/${second.runId}`);
      return response.status === 200 && ((await response.json()) as { run: { status: string } }).run.status === 'cancelled';
    }, 'the replica to catch up');
  });

  it("shows queues and a pending run's queue reason as the replica has them", async () => {
    type Queues = { queues: Array<{ name: string; pending: { rate: number }; rateWindowUsed: number }> };
    const hourly = async () => ((await (await get('/queues')).json()) as Queues).queues.find((q) => q.name === 'hourly')!;
    const admitted = await t.client.start(NapLong, null, { queue: 'hourly' });
    await eventually(async () => (await hourly()).rateWindowUsed === 1, 'the replica to replay the admitted run');

    await cluster.pauseReplay();
    const held = await t.client.start(NapLong, null, { queue: 'hourly' });
    expect((await t.client.getRun(held.runId)).waiting).toMatchObject({ kind: 'queue', cause: 'rate' }); // on the primary
    expect((await hourly()).pending.rate).toBe(0); // the paused replica has no run pending
    await cluster.resumeReplay();
    await eventually(async () => (await hourly()).pending.rate === 1, 'the replica to catch up');
    const listed = (await (await get('/runs?waitingFor=queue')).json()) as { runs: Array<{ runId: string; waiting: unknown }> };
    expect(listed.runs).toEqual([
      expect.objectContaining({ runId: held.runId, waiting: expect.objectContaining({ kind: 'queue', cause: 'rate' }) }),
    ]);
    expect(admitted.runId).not.toBe(held.runId);
  });

  it('a replica that cannot be reached at boot does not stop the application: its workflows run, the dashboard reads the primary, with a warning', async () => {
    const warnings: string[] = [];
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
    let down: DurableTestApp | undefined;
    try {
      down = await startApp({
        schema: 'durable',
        providers: operatorWorkflows,
        listen: true,
        // Nothing listens on port 1: the connection is refused at once.
        options: {
          connection: cluster.primaryUrl,
          dashboard: { auth: { token: TOKEN }, readConnection: 'postgres://postgres@127.0.0.1:1/none' },
        },
      });
      expect(warnings.some((w) => w.includes("The dashboard's readConnection cannot be reached"))).toBe(true);
      const run = await down.client.start(NapLong, null);
      const response = await fetch(`${down.url}/durable/api/runs/${run.runId}`, { headers: auth });
      expect(response.status).toBe(200);
    } finally {
      warn.mockRestore();
      await down?.close();
    }
  });

  it('refuses a readConnection that is neither a URL nor options, naming the option', () => {
    expect(() =>
      DurableModule.forRoot({ connection: 'postgres://x', dashboard: { auth: { token: TOKEN }, readConnection: 42 as never } }),
    ).toThrow(/dashboard.readConnection must be a Postgres URL or connection options/);
  });
});
