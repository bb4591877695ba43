import type { Page } from 'playwright-core';
import { DeadlineExceededError, DurableWorkflow, NonRetryableError, Workflow, WorkflowContext } from 'nestjs-durable';
import { dashboardSuite } from '../setup/browser';
import { DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'deadline-token-0123456789abcdef';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

// A grace long enough that a deadline set a minute or two back still makes the awaited call throw
// (past the grace, the run would be failed outright, with no journaled passing).
@Workflow('await-go', { deadlineGrace: '10m' })
export class AwaitGo implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal('go');
  }
}

/** Fails at once, for good: a failed run whose deadline is still ahead. */
@Workflow('fails-at-once', { retry: { maxAttempts: 1 } })
export class FailsAtOnce implements DurableWorkflow<null, never> {
  async run(): Promise<never> {
    throw new NonRetryableError('declined');
  }
}

@Workflow('spawn-detached')
export class SpawnDetached implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.startChild(AwaitGo, null, { step: 'helper', detached: true });
    return ctx.waitForSignal('done');
  }
}

/** Sleeps an hour: under a shorter deadline, the sleep meets it. */
@Workflow('sleeps-an-hour', { deadlineGrace: '10m' })
export class SleepsAnHour implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    await ctx.sleep('nap', '1h');
    return 'slept';
  }
}

/** Cleans up past its deadline: it catches the DeadlineExceededError and waits for the cleanup's end, in its grace. */
@Workflow('cleans-up', { deadlineGrace: '10m' })
export class CleansUp implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    try {
      return await ctx.waitForSignal('go');
    } catch (error) {
      if (!(error instanceof DeadlineExceededError)) throw error;
      return ctx.waitForSignal('cleaned');
    }
  }
}

/** A run waiting for its signal, with a deadline an hour ahead. */
async function startRacing(t: DurableTestApp) {
  const run = await t.client.start(AwaitGo, null, { deadline: new Date(Date.now() + HOUR) });
  await eventually(async () => (await t.client.getRun(run.runId)).waiting?.kind === 'signal', `${run.runId} to wait for its signal`);
  return run;
}

const runUrl = (t: DurableTestApp, runId: string) => `${t.url}/durable/#/runs/${encodeURIComponent(runId)}`;

/** 'YYYY-MM-DDTHH:mm' in UTC, as the page's datetime-local input holds it (the page's zone is UTC). */
const utcInput = (ms: number) => new Date(ms).toISOString().slice(0, 16);

describe('a run deadline on the dashboard, in a real browser', () => {
  // The operator's zone is UTC, so the page's local times are the instants' UTC times.
  const suite = dashboardSuite({
    schema: uniqueSchema(),
    token: TOKEN,
    providers: [AwaitGo, SpawnDetached, FailsAtOnce, CleansUp],
    options: { inlineWaitMs: 0 },
    page: { timezoneId: 'UTC' },
  });
  const { db } = suite;
  let t: DurableTestApp;
  let page: Page;
  beforeAll(() => {
    t = suite.app;
    page = suite.page;
  });

  const stored = async (runId: string) => (await t.client.getRun(runId)).deadline?.getTime();
  const shownDeadline = async () => Date.parse((await page.getByTestId('run-deadline').getAttribute('data-iso')) ?? '');
  const openRun = async (runId: string) => {
    await page.goto(runUrl(t, runId));
    await page.locator('[data-testid=run-id]', { hasText: runId }).waitFor();
  };

  it('the run page shows the deadline and a live countdown; a preset extends it from the deadline, and Clear removes it', async () => {
    const run = await startRacing(t);
    const deadline = (await stored(run.runId))!;
    await openRun(run.runId);

    const fact = page.getByTestId('run-deadline');
    await expect(shownDeadline()).resolves.toBe(deadline);
    await expect(fact.innerText()).resolves.toContain(new Date(deadline).toISOString().slice(0, 19).replace('T', ' '));
    const countdown = fact.getByTestId('deadline-countdown');
    const first = await countdown.innerText();
    expect(first).toMatch(/^in (59 min( \d{1,2} s)?|1 h)$/);
    await eventually(async () => (await countdown.innerText()) !== first, 'the countdown to tick');

    await page.getByTestId('deadline-extend-1h').click();
    await eventually(async () => (await stored(run.runId)) === deadline + HOUR, 'the stored deadline to move an hour on');
    await eventually(async () => (await shownDeadline()) === deadline + HOUR, 'the page to show the new deadline');
    await expect(countdown.innerText()).resolves.toMatch(/^in (1 h 59 min|2 h)$/);

    await page.getByTestId('tab-history').click();
    const change = page.locator('[data-testid=history-row][data-event=deadline-set]').getByTestId('deadline-change');
    await expect(change.innerText()).resolves.toMatch(/^from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    await page.getByTestId('deadline-clear').click();
    await eventually(async () => (await stored(run.runId)) === undefined, 'the stored deadline to be cleared');
    await fact.waitFor({ state: 'detached' });
    await expect(page.getByTestId('deadline-clear').count()).resolves.toBe(0);
    await expect(change.last().innerText()).resolves.toMatch(/ to none$/);
    await t.client.cancel(run.runId);
  });

  it('a run past its deadline, cleaning up in its grace, shows when it will be failed, and once the grace is over that it will be; one before its deadline shows nothing of it', async () => {
    const run = await t.client.start(CleansUp, null, { deadline: new Date(Date.now() + HOUR) });
    const waitsFor = async (runId: string, name: string) => {
      const waiting = (await t.client.getRun(runId)).waiting;
      return waiting?.kind === 'signal' && waiting.name === name;
    };
    await eventually(() => waitsFor(run.runId, 'go'), 'the run to wait for go');
    await t.client.setDeadline(run.runId, new Date(Date.now() - MINUTE)); // counts as now: the awaited call throws
    await eventually(() => waitsFor(run.runId, 'cleaned'), 'the run to clean up');
    await openRun(run.runId);
    const deadline = (await stored(run.runId))!;
    const grace = page.getByTestId('deadline-grace');
    await grace.waitFor();
    expect(Date.parse((await grace.getAttribute('data-iso'))!)).toBe(deadline + 10 * MINUTE);
    const shown = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
    await expect(grace.innerText()).resolves.toBe(
      `· failed at ${shown(deadline + 10 * MINUTE)} unless it ends first (10 min of grace to clean up)`,
    );

    // Its grace over (the deadline moved back behind the engine's back: nothing executes it before its wake), it says so.
    await db.query(`UPDATE durable.runs SET deadline = now() - interval '11 minutes' WHERE id = $1`, [run.runId]);
    const moved = (await stored(run.runId))!;
    await page.reload();
    await page.locator('[data-testid=deadline-grace]', { hasText: 'its grace ended' }).waitFor();
    await expect(grace.innerText()).resolves.toBe(
      `· its grace ended at ${shown(moved + 10 * MINUTE)}: failed when an instance executes it next`,
    );
    await t.client.cancel(run.runId);

    // A run before its deadline: nothing of it (the workflows, which the grace is read from, are loaded by now).
    const calm = await t.client.start(CleansUp, null, { deadline: new Date(Date.now() + HOUR) });
    await eventually(() => waitsFor(calm.runId, 'go'), 'the other run to wait for go');
    await openRun(calm.runId);
    await page.getByTestId('run-deadline').waitFor();
    await expect(grace.count()).resolves.toBe(0);
    await t.client.cancel(calm.runId);
  });

  it('the runs list marks the runs racing a deadline, and only them', async () => {
    const racing = await startRacing(t);
    const calm = await t.client.start(AwaitGo, null);
    await page.goto(`${t.url}/durable/#/runs?status=all&workflow=await-go`);
    const indicator = (runId: string) => page.locator(`[data-testid=run-row][data-run-id="${runId}"]`).getByTestId('deadline-countdown');
    await expect(indicator(racing.runId).innerText()).resolves.toMatch(/^in (59 min|1 h)$/);
    await expect(indicator(racing.runId).getAttribute('title')).resolves.toContain(
      (await t.client.getRun(racing.runId)).deadline!.toISOString(),
    );
    await page.locator(`[data-testid=run-row][data-run-id="${calm.runId}"]`).waitFor();
    await expect(indicator(calm.runId).count()).resolves.toBe(0);
    await Promise.all([t.client.cancel(racing.runId), t.client.cancel(calm.runId)]);
  });

  it('an exact instant is set as typed; one already passed is confirmed first, and the run stops there', async () => {
    const run = await startRacing(t);
    await openRun(run.runId);
    const later = Math.floor((Date.now() + 2 * HOUR) / MINUTE) * MINUTE;
    await page.getByTestId('deadline-input').fill(utcInput(later));
    await page.getByTestId('deadline-set').click();
    await eventually(async () => (await stored(run.runId)) === later, 'the typed deadline to be stored');

    await page.getByTestId('deadline-input').fill(utcInput(Date.now() - 2 * MINUTE));
    await page.getByTestId('deadline-set').click();
    await page.getByTestId('confirm').click();
    await page.locator('[data-testid=run-status]', { hasText: 'failed' }).waitFor();
    await expect((await t.client.getRun(run.runId)).error).toMatchObject({ name: 'DeadlineExceededError' });
    await page.locator('[data-testid=run-deadline] [data-testid=deadline-countdown][data-passed]').waitFor();

    await page.getByTestId('tab-journal').click();
    // Waited for as shown: read at once, the step could be in the page before the tab showed it (its text then empty).
    await page
      .getByTestId('journal-step')
      .filter({ hasText: 'deadline-passed' })
      .filter({ hasText: /DeadlineExceededError: Run ".+" passed its deadline/ })
      .waitFor();

    // A retry would meet the passed deadline at once, and the server refuses it: the page says to move it first.
    await page.getByTestId('retry-needs-deadline').waitFor();
    await expect(page.getByTestId('action-retry').isDisabled()).resolves.toBe(true);
    await page.getByTestId('deadline-extend-1h').click();
    await page.locator('[data-testid=action-retry]:not([disabled])').waitFor();
    await expect(page.getByTestId('retry-needs-deadline').count()).resolves.toBe(0);
    await page.getByTestId('action-retry').click();
    await eventually(async () => (await t.client.getRun(run.runId)).waiting?.kind === 'signal', 'the retried run to wait again');
    await t.client.cancel(run.runId);
  });

  it("a failed run's Retry turns to 'move the deadline first' when its deadline passes while the page is open", async () => {
    const run = await t.client.start(FailsAtOnce, null, { deadline: new Date(Date.now() + 8_000) });
    await expect(run.result({ timeout: '10s' })).rejects.toThrow('declined');
    await openRun(run.runId);
    await page.locator('[data-testid=action-retry]:not([disabled])').waitFor();
    await page.getByTestId('retry-needs-deadline').waitFor({ timeout: 15_000 }); // no reload: the page follows the clock
    await expect(page.getByTestId('action-retry').isDisabled()).resolves.toBe(true);
    await t.client.cancel(run.runId);
  });

  it("shows the server's refusal when the run ended behind a stale page (409)", async () => {
    const run = await startRacing(t);
    const detail = `/durable/api/runs/${encodeURIComponent(run.runId)}`;
    const isDetail = (url: URL) => url.pathname === detail;
    const loaded = page.waitForResponse((response) => isDetail(new URL(response.url())));
    await openRun(run.runId);
    const stale = await (await loaded).json();
    // The page keeps seeing the run as it was: its refreshes get that first answer again.
    await page.route(isDetail, (route) => route.fulfill({ json: stale }));
    try {
      await t.client.cancel(run.runId);
      await page.getByTestId('deadline-extend-15m').click();
      const error = await page.getByTestId('deadline-error').innerText();
      expect(error).toContain('INVALID_TRANSITION');
      expect(error).toContain(`Cannot setDeadline run "${run.runId}": it is cancelled`);
    } finally {
      await page.unroute(isDetail);
    }
  });

  it("a detached child says so beside its parent, and in its parent's children", async () => {
    const parent = await t.client.start(SpawnDetached, null);
    await eventually(async () => (await t.client.getRun(parent.runId)).waiting?.kind === 'signal', 'the parent to wait');
    await openRun(parent.runId);
    await page.getByTestId('tab-children').click();
    // Marked in its parent's children too: the ones a cancel of the parent leaves be.
    await expect(page.getByTestId('child-row').getByTestId('child-detached').innerText()).resolves.toBe('detached');
    await page.getByTestId('child-row').locator('a').click();
    await expect(page.getByTestId('detached').innerText()).resolves.toBe('detached');
    const child = `${parent.runId}/helper`; // a child's id: its parent's and its step's

    // The timeline draws the child from its own detail, which the live feed refreshes: not polled (every 2 s) while it is up.
    await page.goto(`${runUrl(t, parent.runId)}?tab=timeline`);
    await page.locator('[data-testid=live-status][data-mode=live]').waitFor();
    await page.locator(`[data-testid=timeline-child-lane][data-run-id="${child}"] [data-testid=timeline-status]`).waitFor();
    const asked: string[] = [];
    const count = (request: { url(): string }) => {
      if (decodeURIComponent(new URL(request.url()).pathname) === `/durable/api/runs/${child}`) asked.push(request.url());
    };
    page.on('request', count);
    await page.waitForTimeout(6_000); // an absence: three polling intervals (polled, at least three requests)
    page.off('request', count);
    expect(asked.length).toBeLessThanOrEqual(1); // the feed's opening refreshes every page once

    // The parent's cancel leaves it be, and its dialog does not count it among the children it cancels.
    await openRun(parent.runId);
    await page.getByTestId('action-cancel').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.innerText()).resolves.toContain('stops for good. A step in flight');
    await page.getByTestId('confirm').click();
    await eventually(async () => (await t.client.getRun(parent.runId)).status === 'cancelled', 'the parent to be cancelled');
    expect((await t.client.getRun(child)).status).toBe('waiting');
    await t.client.cancel(child);
  });
});

describe('a run deadline on a read-only dashboard', () => {
  const suite = dashboardSuite({
    schema: uniqueSchema(),
    token: TOKEN,
    providers: [AwaitGo],
    options: { inlineWaitMs: 0, dashboard: { auth: { token: TOKEN }, readOnly: true } },
  });

  it('shows the deadline but no control to move it', async () => {
    const { app, page } = suite;
    const run = await startRacing(app);
    await page.goto(runUrl(app, run.runId));
    await page.getByTestId('run-deadline').getByTestId('deadline-countdown').waitFor();
    await expect(page.getByTestId('deadline-form').count()).resolves.toBe(0);
    await app.client.cancel(run.runId);
  });
});

describe('a Resume with nothing to end, in a real browser', () => {
  // The dashboard's instance executes nothing: the run's deadline passes with no worker up (a deploy, say).
  const schema = uniqueSchema();
  const suite = dashboardSuite({
    schema,
    token: TOKEN,
    providers: [SleepsAnHour],
    options: { inlineWaitMs: 0, worker: { enabled: false }, sweeper: false },
    page: { timezoneId: 'UTC' },
  });

  it('says so, and why: a sleep past its deadline meets it, it is not ended', async () => {
    const { app, page } = suite;
    const worker = await startApp({ schema, providers: [SleepsAnHour], options: { inlineWaitMs: 0 } });
    const runId = await (async () => {
      try {
        const run = await worker.client.start(SleepsAnHour, null, { timeout: '1h' });
        await eventually(async () => (await app.client.getRun(run.runId)).waiting?.kind === 'sleep', 'the run asleep');
        return run.runId;
      } finally {
        await worker.close(); // no instance executes runs from here on
      }
    })();
    // Its deadline moved to now: passed, not yet met.
    await app.client.setDeadline(runId, new Date());

    await page.goto(runUrl(app, runId));
    await page.getByTestId('action-resume').click();
    // Before: the answer read as a resume, and nothing on the page changed.
    const notice = page.getByTestId('resume-unchanged');
    await expect(notice.innerText()).resolves.toBe(
      'Nothing to end: the run is due already (its deadline has passed), and runs as soon as an instance takes it up.',
    );
    expect((await app.client.getRun(runId)).status).toBe('waiting');
    await app.client.cancel(runId);
  });

  it('says why for a delayed start whose deadline passed before it began: it will not begin', async () => {
    const { app, page } = suite;
    const run = await app.client.start(SleepsAnHour, null, { delay: '1h' });
    await app.client.setDeadline(run.runId, new Date());

    await page.goto(runUrl(app, run.runId));
    await page.getByTestId('action-resume').click();
    await expect(page.getByTestId('resume-unchanged').innerText()).resolves.toBe(
      'Nothing to end: its deadline passed before it began, so it will not begin; the sweeper fails it.',
    );
    expect((await app.client.getRun(run.runId)).waiting?.kind).toBe('start');
    await app.client.cancel(run.runId);
  });
});
