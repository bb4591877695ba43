import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../setup/durable-app';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
const TOKEN = 'example-e2e-token-0123456789';

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/**
 * Starts the example exactly as `npm start` does (scripts/start-example.mjs, an embedded PostgreSQL
 * whose data stays in `dataDir`), running the TypeScript sources so no build is needed.
 */
function startExample(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start-example.mjs')], {
    cwd: ROOT,
    detached: true, // its own process group: the test kills the app and its PostgreSQL together
    env: {
      ...process.env,
      DATABASE_URL: '',
      EXAMPLE_DATA_DIR: dataDir,
      EXAMPLE_ENTRY: join(ROOT, 'apps/example/src/main.ts'),
      PORT: String(port),
      DASHBOARD_TOKEN: TOKEN,
      DELIVERY_WINDOW: '1s',
      FEEDBACK_TIMEOUT: '30s',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Dashboard:')) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the example exited (${code}) before it was ready:\n${output}`)));
  });
}

/** SIGKILL to the app's whole process group (the wrapper and the app; PostgreSQL detaches itself). */
function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    process.kill(-child.pid!, 'SIGKILL');
  });
}

describe('the example app, started the way npm start does', () => {
  const parent = mkdtempSync(join(tmpdir(), 'example-e2e-'));
  chmodSync(parent, 0o755); // PostgreSQL runs as its own user and must reach the data folder
  const dataDir = join(parent, 'postgres');
  let app: ChildProcess | undefined;
  let base = '';

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await startExample(dataDir, port);
    (app as ChildProcess & { port?: number }).port = port;
  });
  afterAll(async () => {
    if (app) await killGroup(app);
    // PostgreSQL outlives the killed group: stop it with the same helper npm start uses (ESM, so in a child).
    execFileSync(process.execPath, [
      '-e',
      `import(${JSON.stringify(join(ROOT, 'test/setup/embedded-postgres.mjs'))}).then((m) => m.stopOrphan(${JSON.stringify(dataDir)}))`,
    ]);
    rmSync(parent, { recursive: true, force: true });
  });

  const json = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const order = (orderId: string) => json('GET', `/orders/${orderId}`).then((r) => r.body);

  it('places an order, takes an approval from the dashboard API and idempotent webhooks, survives a restart, and charges once', async () => {
    const placed = await json('POST', '/orders', { customer: 'Ada', amountCents: 125_000 });
    expect(placed.status).toBe(201);
    const { orderId, runId } = placed.body;

    // The approval is a select (approve, reject, or an escalation timer) under the order's run deadline.
    const awaiting = await eventually(
      async () => {
        const current = await order(orderId);
        return current.run.waiting?.kind === 'select' && current;
      },
      'the order to wait for approval',
      20_000,
    );
    expect(awaiting.run.waiting).toMatchObject({
      name: 'approval',
      arms: [
        { arm: 'approve', kind: 'signal', name: 'manager-approval' },
        { arm: 'reject', kind: 'signal', name: 'manager-rejection' },
        { arm: 'escalate', kind: 'timer' },
      ],
    });
    expect(Date.parse(awaiting.run.deadline)).toBeGreaterThan(Date.now());
    const approval = await json(
      'POST',
      `/durable/api/runs/${runId}/signals/manager-approval`,
      { payload: { approver: 'maria' } },
      {
        authorization: `Bearer ${TOKEN}`,
        'x-durable-request': '1',
      },
    );
    expect(approval.status).toBe(201);

    await eventually(async () => (await order(orderId)).run.waiting?.kind === 'channel', 'the order to wait for carrier events', 20_000);
    const pickedUp = { orderId, eventId: 'evt-1', event: 'picked-up', at: new Date().toISOString() };
    expect((await json('POST', '/webhooks/carrier', pickedUp)).body).toEqual({ accepted: true });
    expect((await json('POST', '/webhooks/carrier', pickedUp)).body).toEqual({ accepted: false }); // the provider retried

    // A hard restart mid-flow: the app and its PostgreSQL are killed; the data folder is kept.
    const port = (app as ChildProcess & { port?: number }).port!;
    await killGroup(app!);
    app = await startExample(dataDir, port);
    (app as ChildProcess & { port?: number }).port = port;

    // The carrier knows only its tracking number: the run set it as a business key once shipped.
    const { trackingNumber } = (await order(orderId)).run.keys;
    expect(trackingNumber).toEqual(expect.any(String));
    expect((await order(orderId)).run.keys).toMatchObject({ orderId, customer: 'Ada' });
    for (const [eventId, event] of [
      ['evt-2', 'in-transit'],
      ['evt-3', 'delivered'],
    ]) {
      const delivery = { trackingNumber, eventId, event, at: new Date().toISOString() };
      expect((await json('POST', '/webhooks/carrier', delivery)).body.accepted).toBe(true);
      expect((await json('POST', '/webhooks/carrier', delivery)).body.accepted).toBe(false);
    }
    const feedback = await json('POST', '/webhooks/feedback', { orderId, rating: 5 });
    expect(feedback.body).toEqual({ accepted: true });

    const done = await eventually(
      async () => {
        const current = await order(orderId);
        return current.run.status === 'completed' && current;
      },
      'the order to close',
      30_000,
    );
    expect(done.run.output).toMatchObject({ orderId, outcome: 'closed', rating: 5 });
    expect(done.order.status).toBe('closed');
    expect(done.order.tracking.map((t: { event: string }) => t.event)).toEqual(['picked-up', 'in-transit', 'delivered']);
    expect(done.payments.map((p: { kind: string }) => p.kind)).toEqual(['charge']);
    // The shipment (a child run calling the carrier's API) went through the carrier queue.
    const auth = { authorization: `Bearer ${TOKEN}` };
    const ships = (await json('GET', '/durable/api/runs?workflow=ship-order', undefined, auth)).body.runs as Array<Record<string, unknown>>;
    expect(ships.find((run) => run.parentRunId === runId)).toMatchObject({ queue: 'carrier', status: 'completed' });
    const { queues } = (await json('GET', '/durable/api/queues', undefined, auth)).body;
    expect(queues).toEqual([expect.objectContaining({ name: 'carrier', concurrency: 4, rateLimit: { limit: 100, periodMs: 60_000 } })]);
  });
});
