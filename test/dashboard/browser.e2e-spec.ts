import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { Breaks, NapLong, operatorWorkflows, ParentOfReview, RefundReview, Review } from '../fixtures/operator.workflows';
import { dashboardSuite } from '../setup/browser';
import { DurableTestApp, eventually, PLATFORMS, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'browser-token-0123456789abcdef';
/** Screenshots go to SCREENSHOTS (docs/images when refreshing the docs), else to a temporary folder. */
const SHOTS = process.env.SCREENSHOTS ?? join(tmpdir(), 'durable-screenshots');

/** A workflow with a timeout of its own: the start form says what a start without one gets. */
@Workflow('timed', { timeout: '90m', deadlineGrace: '1m' })
class Timed implements DurableWorkflow<null, string> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.sleep('wait', '1h');
    return 'done';
  }
}

// The core flows on both HTTP platforms: serving the page, signing in, a signal through the form, a bulk action.
describe.each(PLATFORMS)('dashboard in a real browser on %s', (platform) => {
  const suite = dashboardSuite({ schema: uniqueSchema(), token: TOKEN, providers: [...operatorWorkflows, Timed], platform });
  const { db } = suite;
  let t: DurableTestApp;
  let page: Page;
  beforeAll(() => {
    mkdirSync(SHOTS, { recursive: true });
    t = suite.app;
    page = suite.page;
  });

  const waiting = (runId: string) =>
    eventually(async () => (await t.client.getRun(runId).catch(() => undefined))?.status === 'waiting', `${runId} to wait`);
  // The docs' screenshots come from one platform: the pages are the same.
  const shot = async (name: string) => {
    if (platform === 'express') await page.screenshot({ path: join(SHOTS, `${name}.png`) });
  };

  it('serves the page with a Content Security Policy that forbids inline scripts', async () => {
    const response = await fetch(`${t.url}/durable/`);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await response.text()).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('finds a waiting run by its reason, delivers its signal through the form, and watches it complete', async () => {
    const run = await t.client.start(Review, { orderId: 'browser-1' });
    await waiting(run.runId);
    await page.getByTestId('nav-runs').click();
    const row = page.locator(`[data-testid=run-row][data-run-id="${run.runId}"]`);
    await expect(row.getByTestId('wait-reason').innerText()).resolves.toMatch(/signal\s+approval/);
    await shot('runs');
    await row.locator('a').first().click();
    await expect(page.getByTestId('run-status').innerText()).resolves.toBe('waiting');
    await expect(page.getByTestId('signal-name').inputValue()).resolves.toBe('approval');

    // The JSON Schema of the signal is checked before sending: the error shows inline, nothing is sent.
    // (The payload opens as a form built from the schema; these type JSON: run-page.browser.e2e-spec.ts tests the form.)
    await page.getByTestId('signal-mode-json').click();
    await page.getByTestId('signal-payload').fill('{ "approved": "yes" }');
    await expect(page.getByTestId('signal-error').innerText()).resolves.toMatch(/approved|by/);
    await expect(page.getByTestId('signal-send').isDisabled()).resolves.toBe(true);
    expect(await db.count('signals', 'run_id = $1', [run.runId])).toBe(0);

    await page.getByTestId('signal-payload').fill('{ "approved": true, "by": "operator" }');
    await page.getByTestId('signal-send').click();
    await page.locator('[data-testid=run-status]', { hasText: 'completed' }).waitFor({ timeout: 10_000 });
    expect(await run.result()).toMatchObject({ approval: { approved: true, by: 'operator' } });
    await page.getByTestId('tab-journal').click();
    await page.getByTestId('journal-step').first().waitFor();
    await shot('run-detail');
  });

  it("shows the server's validation error inline when only the server can tell", async () => {
    const run = await t.client.start(RefundReview, null);
    await waiting(run.runId);
    await page.goto(`${t.url}/durable/#/runs/${encodeURIComponent(run.runId)}`);
    await page.getByTestId('signal-mode-json').click();
    await page.getByTestId('signal-payload').fill('{ "amount": 7 }');
    await page.getByTestId('signal-send').click();
    await expect(page.getByTestId('signal-error').innerText()).resolves.toContain('amount must be a multiple of 5');
    expect(await db.count('signals', 'run_id = $1', [run.runId])).toBe(0);
  });

  it('resumes several sleeping runs at once with a bulk action, each outcome reported', async () => {
    const runs = [await t.client.start(NapLong, null), await t.client.start(NapLong, null)];
    for (const run of runs) await waiting(run.runId);
    await page.goto(`${t.url}/durable/#/runs?status=waiting&workflow=nap-long`);
    for (const run of runs) await page.locator(`[data-testid=run-row][data-run-id="${run.runId}"]`).getByTestId('select-run').check();
    await page.getByTestId('bulk-resume').click();
    await page.getByTestId('confirm').click();
    await page.getByTestId('bulk-results').waitFor();
    for (const run of runs) {
      await expect(page.locator(`[data-testid=bulk-result][data-run-id="${run.runId}"]`).getAttribute('data-outcome')).resolves.toBe(
        'accepted',
      );
      await expect(run.result({ timeout: '10s' })).resolves.toBe('rested');
    }
  });

  it('renders payloads holding markup and script as inert text', async () => {
    const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    const run = await t.client.start(Review, { orderId: 'xss', note: hostile });
    await page.goto(`${t.url}/durable/#/runs/${encodeURIComponent(run.runId)}`);
    const payload = page.getByTestId('payload').first();
    await expect(payload.innerText()).resolves.toContain(JSON.stringify(hostile)); // as JSON text, quotes escaped
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    await t.client.cancel(run.runId);

    // An error message holding markup (the Breaks workflow throws one) is text too.
    const broken = await t.client.start(Breaks, null);
    await expect(broken.result()).rejects.toThrow();
    await page.goto(`${t.url}/durable/#/runs/${encodeURIComponent(broken.runId)}`);
    await page.getByText('<img src=x onerror=alert(1)> broke').first().waitFor();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
  });

  it('starts a delayed run from the Workflows page and counts down to its start on the run page and in the runs list', async () => {
    await page.getByTestId('nav-workflows').click();
    await page.getByTestId('start-workflow').selectOption('nap-long');
    await page.getByTestId('start-input').fill('null');
    await page.getByTestId('start-delay').fill('10m');
    await page.getByTestId('start-submit').click();
    await page.waitForURL(/#\/runs\/[^?]+$/);
    const runId = decodeURIComponent(page.url().split('#/runs/')[1]);
    const run = await t.client.getRun(runId);
    expect(run.waiting).toMatchObject({ kind: 'start' });
    const until = (run.waiting as { until: Date }).until.toISOString();

    const countdown = page.getByTestId('wait-reason').getByTestId('starts-in');
    const first = await countdown.innerText();
    expect(first).toMatch(/^starts in (9 min( \d{1,2} s)?|10 min)$/);
    await expect(countdown.getAttribute('title')).resolves.toContain(until);
    // It counts down live, without a reload.
    await eventually(async () => (await countdown.innerText()) !== first, 'the countdown to tick');
    await shot('delayed-start');

    await page.goto(`${t.url}/durable/#/runs?waitingFor=start`);
    const row = page.locator(`[data-testid=run-row][data-run-id="${runId}"]`);
    await expect(row.getByTestId('wait-reason').innerText()).resolves.toMatch(/^delayed start, starts in 9 min( \d{1,2} s)?$/);
    await t.client.cancel(runId);
  });

  it("starts a run with a timeout and business keys, or at an instant; the workflow's own timeout is shown; a delay and an instant both, or a word that is not a key, are refused before sending", async () => {
    await page.getByTestId('nav-workflows').click();
    const card = page.locator('[data-testid=workflow][data-name="timed"]');
    await expect(card.getByTestId('workflow-timeout').innerText()).resolves.toBe('timeout 1 h 30 min');
    await expect(card.getByTestId('workflow-timeout').getAttribute('title')).resolves.toContain('after 1 min of grace');
    await page.getByTestId('start-workflow').selectOption('timed');
    await expect(page.getByTestId('start-timeout-hint').innerText()).resolves.toMatch(
      /1 min of grace.*empty: the workflow's own, 1 h 30 min/s,
    );
    await page.getByTestId('start-input').fill('null');
    await page.getByTestId('start-timeout').fill('2h');
    await page.getByTestId('start-keys').fill('orderId:W-1 note:"two words"');
    const before = Date.now();
    await page.getByTestId('start-submit').click();
    await page.waitForURL(/#\/runs\/[^?]+$/);
    const after = Date.now();
    const timed = await t.client.getRun(decodeURIComponent(page.url().split('#/runs/')[1]));
    expect(timed.keys).toEqual({ orderId: 'W-1', note: 'two words' });
    // Its own 2 h, not the workflow's 90 min: counted from its start, on the database's clock (a second's leeway each side).
    expect(timed.deadline!.getTime()).toBeGreaterThanOrEqual(before + 7_200_000 - 1_000);
    expect(timed.deadline!.getTime()).toBeLessThanOrEqual(after + 7_200_000 + 1_000);
    await t.client.cancel(timed.runId);

    await page.getByTestId('nav-workflows').click();
    await page.getByTestId('start-workflow').selectOption('nap-long');
    await page.getByTestId('start-input').fill('null');
    await expect(page.getByTestId('start-timeout-hint').innerText()).resolves.toContain('empty: none (the workflow has no timeout)');
    // An hour ahead, as the browser's zone writes it in the input (to the second).
    const at = Math.ceil((Date.now() + 3_600_000) / 1_000) * 1_000;
    const local = await page.evaluate((ms) => {
      const d = new Date(ms);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    }, at);
    // A half-typed instant reads as none: said, where it would have started the run now.
    const error = page.getByTestId('start-error');
    await page.getByTestId('start-at').focus();
    await page.keyboard.type('12');
    await page.locator('[data-testid=start-error]', { hasText: 'Finish the date and time, or clear it.' }).waitFor();
    await expect(page.getByTestId('start-submit').isDisabled()).resolves.toBe(true);
    // Digits alone would be milliseconds: a unit is asked for.
    await page.getByTestId('start-timeout').fill('30');
    await page.getByTestId('start-delay').fill('10m');
    await page.getByTestId('start-at').fill(local);
    await page.getByTestId('start-keys').fill('orderId:W-2 oops');
    await expect(error.innerText()).resolves.toMatch(/a delay or an instant to start at, not both/);
    await expect(error.innerText()).resolves.toContain('"oops" is not one');
    await expect(error.innerText()).resolves.toContain('Give a unit: 30s, 5m, 2h or 7d.');
    await expect(error.innerText()).resolves.not.toContain('Finish the date and time');
    await expect(page.getByTestId('start-submit').isDisabled()).resolves.toBe(true);
    await page.getByTestId('start-timeout').fill('');
    await page.getByTestId('start-delay').fill('');
    await page.getByTestId('start-keys').fill('');
    await error.waitFor({ state: 'detached' });
    await page.getByTestId('start-submit').click();
    await page.waitForURL(/#\/runs\/[^?]+$/);
    const delayed = await t.client.getRun(decodeURIComponent(page.url().split('#/runs/')[1]));
    expect(delayed.waiting).toMatchObject({ kind: 'start' });
    expect((delayed.waiting as { until: Date }).until.getTime()).toBe(at);
    await t.client.cancel(delayed.runId);
  });

  it("a debounced run's page names its key and, until it begins, the instant its maxDelay starts it by", async () => {
    const run = await t.client.start(NapLong, null, { debounce: { key: 'nightly-digest', delay: '10m', maxDelay: '1h' } });
    const [{ cap }] = await db.query<{ cap: Date }>(`SELECT debounce_until AS cap FROM durable.runs WHERE id = $1`, [run.runId]);
    await page.goto(`${t.url}/durable/#/runs/${encodeURIComponent(run.runId)}`);
    const fact = page.getByTestId('run-debounce');
    await expect(fact.locator('dd').innerText()).resolves.toMatch(
      /^key nightly-digest · starts by \d{4}-\d\d-\d\d \d\d:\d\d:\d\d at the latest$/,
    );
    await expect(fact.locator('time').getAttribute('title')).resolves.toContain(cap.toISOString());
    await t.client.cancel(run.runId);
    // Cancelled before it began, it will never start: no instant to start by.
    expect((await t.client.getRun(run.runId)).debounce).toEqual({ key: 'nightly-digest' });
  });

  it('takes the screenshots of the main pages for the docs', async () => {
    const parent = await t.client.start(ParentOfReview, { orderId: 'shot' });
    await waiting(parent.runId);
    await page.goto(`${t.url}/durable/#/`);
    await page.getByTestId('stat-waiting').waitFor();
    await shot('overview');
    await page.getByTestId('nav-workflows').click();
    await page.getByTestId('workflow').first().waitFor();
    await shot('workflows');
  });
});
