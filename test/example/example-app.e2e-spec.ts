import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

interface Started {
  child: ChildProcess;
  /** Everything the example printed so far (stdout and stderr). */
  output(): string;
}

/**
 * Starts the example exactly as `npm start` does (scripts/start-example.mjs, an embedded PostgreSQL
 * whose data stays in `dataDir`), running the TypeScript sources so no build is needed. A generated
 * dashboard token is kept beside `dataDir`, never in the checkout's `.data/`.
 */
function startExample(dataDir: string, port: number, env: Record<string, string> = {}, args: string[] = []): Promise<Started> {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/start-example.mjs'), ...args], {
    cwd: ROOT,
    detached: true, // its own process group: the test kills the app and its PostgreSQL together
    env: {
      ...process.env,
      DATABASE_URL: '',
      EXAMPLE_DATA_DIR: dataDir,
      EXAMPLE_ENTRY: join(ROOT, 'apps/example/src/main.ts'),
      PORT: String(port),
      DASHBOARD_TOKEN: TOKEN,
      DASHBOARD_TOKEN_FILE: join(dirname(dataDir), 'dashboard-token'),
      DELIVERY_WINDOW: '1s',
      FEEDBACK_TIMEOUT: '30s',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const started = { child, output: () => output };
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Dashboard:')) resolve(started);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the example exited (${code}) before it was ready:\n${output}`)));
  });
}

/** SIGKILL to the app's whole process group (the wrapper and the app; PostgreSQL runs in a group of its own, stopped when the wrapper goes). */
function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    process.kill(-child.pid!, 'SIGKILL');
  });
}

/** PostgreSQL outlives the killed group: stop it with the same helper npm start uses (ESM, so in a child). */
function stopPostgres(dataDir: string): void {
  execFileSync(process.execPath, [
    '-e',
    `import(${JSON.stringify(join(ROOT, 'test/setup/embedded-postgres.mjs'))}).then((m) => m.stopOrphan(${JSON.stringify(dataDir)}))`,
  ]);
}

/** A folder the embedded PostgreSQL (its own user when the tests run as root) can reach. */
function dataFolder(): { parent: string; dataDir: string } {
  const parent = mkdtempSync(join(tmpdir(), 'example-e2e-'));
  chmodSync(parent, 0o755);
  return { parent, dataDir: join(parent, 'postgres') };
}

describe('the example app, started the way npm start does', () => {
  const { parent, dataDir } = dataFolder();
  let app: ChildProcess | undefined;
  let base = '';
  /** What each process of the example printed: the one killed mid-flow and the one after it. */
  const outputs: Array<() => string> = [];

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const started = await startExample(dataDir, port);
    outputs.push(started.output);
    app = started.child;
    (app as ChildProcess & { port?: number }).port = port;
  });
  afterAll(async () => {
    if (app) await killGroup(app);
    stopPostgres(dataDir);
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
    // Input past what it feeds (a business key of 200 characters, an integer column) is a 400 naming it, not a 500.
    for (const [bad, field] of [
      [{ customer: 'x'.repeat(201), amountCents: 100 }, 'customer'],
      [{ customer: 'Ada', amountCents: 2 ** 31 }, 'amountCents'],
      [{ customer: 'A\uD800da', amountCents: 100 }, 'customer'], // only the library's check of the key refuses it (a lone surrogate)
      [{ customer: 'A\u0000da', amountCents: 100 }, 'customer'], // PostgreSQL's text column refuses it before the library sees it
    ] as const) {
      const refused = await json('POST', '/orders', bad);
      expect([refused.status, refused.body.message]).toEqual([400, expect.stringContaining(field)]);
    }
    // A client that retries with its Idempotency-Key gets the order it placed, not a second one.
    const idempotent = { 'idempotency-key': 'ada-checkout-1' };
    const placed = await json('POST', '/orders', { customer: 'Ada', amountCents: 125_000 }, idempotent);
    expect(placed.status).toBe(201);
    const { orderId, runId } = placed.body;
    expect(await json('POST', '/orders', { customer: 'Ada', amountCents: 125_000 }, idempotent)).toEqual({
      status: 201,
      body: placed.body,
    });
    const reused = await json('POST', '/orders', { customer: 'Ada', amountCents: 99 }, idempotent);
    expect([reused.status, reused.body.message]).toEqual([409, expect.stringContaining('Idempotency-Key')]);

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
    const restarted = await startExample(dataDir, port);
    outputs.push(restarted.output);
    app = restarted.child;
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
    // The ledger ignores a second insert of the charge's key: what shows a charge made once is the step executed once.
    const charges = outputs.map((output) => output().split(`Charged 1250.00 for order ${orderId}`).length - 1);
    expect(charges.reduce((a, b) => a + b)).toBe(1);
    // The shipment (a child run calling the carrier's API) went through the carrier queue.
    const auth = { authorization: `Bearer ${TOKEN}` };
    const ships = (await json('GET', '/durable/api/runs?workflow=ship-order', undefined, auth)).body.runs as Array<Record<string, unknown>>;
    expect(ships.find((run) => run.parentRunId === runId)).toMatchObject({ queue: 'carrier', status: 'completed' });
    const { queues } = (await json('GET', '/durable/api/queues', undefined, auth)).body;
    expect(queues).toEqual([expect.objectContaining({ name: 'carrier', concurrency: 4, rateLimit: { limit: 100, periodMs: 60_000 } })]);
  });
});

describe('an order past its deadline (ORDER_TIMEOUT), and one the carrier refuses (CARRIER_INSURANCE_LIMIT_CENTS)', () => {
  const { parent, dataDir } = dataFolder();
  let app: ChildProcess | undefined;
  let base = '';
  // Long enough for the order to ship first on a busy machine; the feedback wait outlasts it.
  const TIMEOUT_S = 30;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = (
      await startExample(dataDir, port, { ORDER_TIMEOUT: `${TIMEOUT_S}s`, FEEDBACK_TIMEOUT: '10m', CARRIER_INSURANCE_LIMIT_CENTS: '5000' })
    ).child;
  });
  afterAll(async () => {
    if (app) await killGroup(app);
    stopPostgres(dataDir);
    rmSync(parent, { recursive: true, force: true });
  });

  const json = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await response.json()) as any;
  };

  it('refunds an order whose shipment the carrier refuses (a parcel worth more than it insures)', async () => {
    const { orderId, runId } = await json('POST', '/orders', { customer: 'Edsger', amountCents: 6_000 });
    const ended = await eventually(
      async () => {
        const current = await json('GET', `/orders/${orderId}`);
        return ['completed', 'failed'].includes(current.run.status) && current;
      },
      'the order to end',
      20_000,
    );
    // Before: the child's failure failed the order's run, the customer charged and never refunded.
    expect(ended.run.status).toBe('completed');
    expect(ended.run.output).toEqual({ orderId, outcome: 'undeliverable', refundId: expect.any(String) });
    expect(ended.order.status).toBe('undeliverable');
    expect(ended.payments.map((p: { kind: string }) => p.kind)).toEqual(['charge', 'refund']);
    const shipment = await json('GET', `/durable/api/runs/${encodeURIComponent(`${runId}/ship`)}`);
    expect(shipment.run).toMatchObject({
      status: 'failed',
      error: { name: 'ParcelRefusedError', message: expect.stringContaining('insures parcels up to 50.00') },
    });
  });

  it('closes an order that shipped as it stands, without a refund; late feedback and carrier events are told the order is closed', async () => {
    const { orderId } = await json('POST', '/orders', { customer: 'Grace', amountCents: 4_900 });
    const shipped = await eventually(
      async () => {
        const current = await json('GET', `/orders/${orderId}`);
        return current.run.waiting?.kind === 'channel' && current;
      },
      'the order to ship and wait for carrier events',
      20_000,
    );
    const { trackingNumber } = shipped.run.keys;
    for (const [eventId, event] of [
      ['evt-1', 'picked-up'],
      ['evt-2', 'delivered'],
    ])
      expect(await json('POST', '/webhooks/carrier', { trackingNumber, eventId, event })).toEqual({ accepted: true });

    // Delivered, then waiting for feedback (ten minutes) past the order's deadline.
    const closed = await eventually(
      async () => {
        const current = await json('GET', `/orders/${orderId}`);
        return current.run.status === 'completed' && current;
      },
      'the deadline to close the order',
      (TIMEOUT_S + 30) * 1_000,
    );
    expect(closed.run.output).toMatchObject({ orderId, outcome: 'closed', trackingNumber, rating: null });
    expect(closed.order.status).toBe('closed');
    expect(closed.payments.map((p: { kind: string }) => p.kind)).toEqual(['charge']);

    const closedAnswer = { accepted: false, reason: 'the order is already closed' };
    expect(await json('POST', '/webhooks/feedback', { orderId, rating: 4 })).toEqual(closedAnswer);
    expect(await json('POST', '/webhooks/carrier', { trackingNumber, eventId: 'evt-3', event: 'delivered' })).toEqual(closedAnswer);
  });
});

describe("the example's start: its banner and its dashboard token", () => {
  const { parent, dataDir } = dataFolder();
  const tokenFile = join(parent, 'dashboard-token');
  // No DASHBOARD_TOKEN (an empty one counts as unset), so the example generates and keeps its own.
  const generated = { DASHBOARD_TOKEN: '' };
  let port = 0;
  let current: Started | undefined;

  const restart = async (env: Record<string, string>, args: string[] = []) => {
    if (current) await killGroup(current.child);
    current = await startExample(dataDir, port, env, args);
    return current.output();
  };
  const bannerToken = (output: string) => /paste the token (\w+)/.exec(output)?.[1];
  const queuesStatus = async (token: string) =>
    (await fetch(`http://127.0.0.1:${port}/durable/api/queues`, { headers: { authorization: `Bearer ${token}` } })).status;

  beforeAll(async () => {
    port = await freePort();
    await restart(generated, ['--seed']);
  });
  afterAll(async () => {
    if (current) await killGroup(current.child);
    stopPostgres(dataDir);
    rmSync(parent, { recursive: true, force: true });
  });

  it("shows the app's and the dashboard's URLs and how to sign in, without Nest's module and route listing", () => {
    const output = current!.output();
    expect(output).toContain(`App:        http://localhost:${port}`);
    expect(output).toContain(
      `Dashboard:  http://localhost:${port}/durable/  (paste the token ${bannerToken(output)}, kept in ${tokenFile};`,
    );
    expect(output).not.toContain('Mapped {');
    expect(output).not.toMatch(/\[(InstanceLoader|RoutesResolver|RouterExplorer)\]/);
  });

  it('says the seeded runs that warn or fail do so on purpose, naming them, and still prints their warnings and errors', async () => {
    const output = current!.output();
    expect(output).toContain(
      "Expected:   the runs seeded by `npm start -- --seed` that warn or fail do so on purpose, to show the dashboard's failure views",
    );
    expect(output).toContain('sync-inventory for SKU-1 (');
    expect(output).toContain('sync-inventory for SKU-404 (');
    await eventually(async () => /WARN.*\(sync-inventory\) attempt 1 failed/.test(current!.output()), 'the retry warning of SKU-1');
    await eventually(async () => /ERROR.*SKU SKU-404 does not exist/.test(current!.output()), 'the failure of SKU-404');
  });

  it('generates the dashboard token once, keeps it in a file, and signs in with it after a restart', async () => {
    const first = bannerToken(current!.output())!;
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(first);
    expect(await queuesStatus(first)).toBe(200);

    const second = bannerToken(await restart(generated))!;
    expect(second).toBe(first);
    expect(await queuesStatus(first)).toBe(200);
  });

  it('DASHBOARD_TOKEN wins over the kept token, and leaves the file alone', async () => {
    const kept = readFileSync(tokenFile, 'utf8');
    const output = await restart({ DASHBOARD_TOKEN: TOKEN });
    expect(output).toContain(`paste the token ${TOKEN}, from DASHBOARD_TOKEN`);
    expect(await queuesStatus(TOKEN)).toBe(200);
    expect(await queuesStatus(kept.trim())).toBe(401);
    expect(existsSync(tokenFile) && readFileSync(tokenFile, 'utf8')).toBe(kept);
  });
});

describe('Ctrl-C on npm start', () => {
  const { parent, dataDir } = dataFolder();
  afterAll(() => {
    stopPostgres(dataDir);
    rmSync(parent, { recursive: true, force: true });
  });

  it('stops the app first, on a live database, then PostgreSQL: no connection error, exit code 0, the server shut down', async () => {
    const { child, output } = await startExample(dataDir, await freePort());
    const before = output().length;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    process.kill(-child.pid!, 'SIGINT'); // what a terminal does: the whole foreground process group
    expect(await exited).toBe(0);
    const shutdown = output().slice(before);
    expect(shutdown).not.toMatch(/ERROR|terminat|ECONNREFUSED|Connection terminated/i);
    // A server shut down cleanly removes its pid file: the wrapper waited for it before exiting.
    expect(existsSync(join(dataDir, 'postmaster.pid'))).toBe(false);
  });
});
