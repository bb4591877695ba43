import { NapLong, operatorWorkflows } from '../fixtures/operator.workflows';
import { launchChromium } from '../setup/browser';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'operator-token-0123456789abcdef';

describe('dashboard: who acted', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  beforeAll(async () => {
    t = await startApp({ schema, providers: operatorWorkflows, listen: true, options: { dashboard: { auth: { token: TOKEN } } } });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await db.dropSchema();
  });

  it('with a shared token, the history records the name the operator gave at sign-in, which the next sign-in offers again', async () => {
    const run = await t.client.start(NapLong, null);
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'waiting', 'the run to sleep');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${t.url}/durable/`);
    await page.getByTestId('login-token').fill(TOKEN);
    await page.getByTestId('login-operator').fill('Zoë Nakamura');
    await page.getByTestId('login-submit').click();
    await page.goto(`${t.url}/durable/#/runs/${encodeURIComponent(run.runId)}`);
    await page.getByTestId('action-cancel').click();
    await page.getByTestId('confirm').click();
    await eventually(async () => (await t.client.getRun(run.runId)).status === 'cancelled', 'the run to be cancelled');
    const [row] = await db.query(`SELECT actor FROM durable.history WHERE run_id = $1 AND event = 'cancelled'`, [run.runId]);
    expect(row.actor).toBe('Zoë Nakamura (token)');

    // Signed out (the token lives for the tab), the form offers the name again.
    const again = await context.newPage();
    await again.goto(`${t.url}/durable/`);
    await expect(again.getByTestId('login-operator').inputValue()).resolves.toBe('Zoë Nakamura');
    await context.close();
  });
});
