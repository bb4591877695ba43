import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cron } from 'croner';
import type { Page } from 'playwright-core';
import { DurableWorkflow, ScheduledInput, ScheduleService, Step, Workflow, WorkflowContext } from 'nestjs-durable';
import { dashboardSuite } from '../setup/browser';
import { DurableTestApp, eventually, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'schedules-token-0123456789abcdef';
const SHOTS = process.env.SCREENSHOTS ?? join(tmpdir(), 'durable-screenshots');

/** Weekdays at 09:00 in Paris: the cron in words, triggered and backfilled from the page ('allow': no slot waits on another). */
@Workflow('schedule-tally', { schedules: [{ name: 'weekday-9am', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', overlap: 'allow' }] })
export class Tally implements DurableWorkflow<ScheduledInput, string> {
  async run(input: ScheduledInput) {
    return this.record(input.scheduledAt);
  }
  @Step() async record(scheduledAt: Date): Promise<string> {
    return `tallied ${new Date(scheduledAt).toISOString()}`;
  }
}

/** Every second, each run waiting for a signal: with overlap 'skip', the slots after the first are skipped. */
@Workflow('schedule-hold', { schedules: [{ name: 'every-second-held', cron: '* * * * * *', overlap: 'skip' }] })
export class Hold implements DurableWorkflow<ScheduledInput, unknown> {
  async run(_: ScheduledInput, ctx: WorkflowContext) {
    return ctx.waitForSignal('release');
  }
}

/** Noon in Paris every other month: five fire times span eight months, so at least one DST transition. */
@Workflow('schedule-bimonthly', { schedules: [{ name: 'bimonthly-noon', cron: '0 12 1 */2 *', timezone: 'Europe/Paris', jitter: '90s' }] })
export class Bimonthly implements DurableWorkflow<ScheduledInput, string> {
  async run() {
    return 'done';
  }
}

interface ScheduleView {
  name: string;
  paused: boolean;
  nextFireTimes: string[];
  lastRun?: { runId: string; status: string };
}

describe('the Schedules page in a real browser', () => {
  const suite = dashboardSuite({
    schema: uniqueSchema(),
    token: TOKEN,
    providers: [Tally, Hold, Bimonthly],
    // The operator's zone is UTC here, so the backfill's inputs are UTC instants.
    page: { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' },
  });
  const { db } = suite;
  let t: DurableTestApp;
  let page: Page;
  beforeAll(() => {
    mkdirSync(SHOTS, { recursive: true });
    t = suite.app;
    page = suite.page;
  });

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${t.url}/durable/api${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  };
  const card = (name: string) => page.locator(`[data-testid=schedule][data-name="${name}"]`);
  const openSchedules = async () => {
    await page.goto(`${t.url}/durable/#/schedules`);
    await card('weekday-9am').waitFor();
  };

  it('lists each schedule with its cron in words and its next five fire times, UTC on hover', async () => {
    await page.getByTestId('nav-schedules').click();
    await card('weekday-9am').waitFor();
    await expect(card('weekday-9am').getByTestId('cron-words').innerText()).resolves.toBe(
      'At 09:00 AM, Monday through Friday (Europe/Paris)',
    );
    const { nextFireTimes } = (await api<{ schedule: ScheduleView }>('/schedules/weekday-9am')).schedule;
    const fires = card('weekday-9am').getByTestId('fire-time');
    await expect(fires.count()).resolves.toBe(5);
    expect(await fires.evaluateAll((items) => items.map((item) => item.getAttribute('data-iso')))).toEqual(nextFireTimes);
    const first = new Date(nextFireTimes[0]).toISOString().slice(0, 19).replace('T', ' ');
    await expect(fires.first().locator('time').getAttribute('title')).resolves.toContain(`${first} UTC`);
    // Its policies: the overlap's meaning on hover, the catch-up, and a jitter where it has one (exact: 90 s is not "1 min").
    await expect(card('weekday-9am').getByTestId('schedule-overlap').getAttribute('title')).resolves.toBe(
      'Every slot starts its run, beside an unfinished one.',
    );
    await expect(card('weekday-9am').getByTestId('schedule-catchup').innerText()).resolves.toBe('the latest missed slot of the last 1 min');
    await expect(card('weekday-9am').getByTestId('schedule-jitter').count()).resolves.toBe(0);
    await expect(card('bimonthly-noon').getByTestId('schedule-jitter').innerText()).resolves.toBe('up to 1 min 30 s');
    await page.screenshot({ path: join(SHOTS, 'schedules.png') });
  });

  it('marks the fire times after which the schedule zone changes its UTC offset', async () => {
    await openSchedules();
    const fires = card('bimonthly-noon').getByTestId('fire-time');
    await expect(fires.count()).resolves.toBe(5);
    const rows = await fires.evaluateAll((items) =>
      items.map((item) => ({ iso: item.getAttribute('data-iso')!, marked: item.querySelector('[data-testid=dst-mark]') !== null })),
    );
    // Noon in Paris is 11:00Z in winter and 10:00Z in summer: a mark exactly where the UTC hour moves.
    for (let i = 1; i < rows.length; i++) {
      expect(rows[i].marked).toBe(new Date(rows[i].iso).getUTCHours() !== new Date(rows[i - 1].iso).getUTCHours());
    }
    expect(rows.some((row) => row.marked)).toBe(true);
  });

  it('pauses a schedule, and resumes it, from the page', async () => {
    await openSchedules();
    const held = card('every-second-held');
    await held.getByTestId('schedule-pause').click();
    await page.locator('[data-testid=schedule][data-name="every-second-held"][data-paused=true]').waitFor();
    await expect(held.getByTestId('schedule-state').innerText()).resolves.toBe('paused');
    expect((await api<{ schedule: ScheduleView }>('/schedules/every-second-held')).schedule.paused).toBe(true);

    await held.getByTestId('schedule-resume').click();
    await page.locator('[data-testid=schedule][data-name="every-second-held"][data-paused=false]').waitFor();
    expect((await api<{ schedule: ScheduleView }>('/schedules/every-second-held')).schedule.paused).toBe(false);
  });

  it('triggers a run now, which appears and completes', async () => {
    await openSchedules();
    await card('weekday-9am').getByTestId('schedule-trigger').click();
    const link = card('weekday-9am').getByTestId('trigger-result').locator('a');
    await link.waitFor();
    const runId = (await link.getAttribute('title'))!;
    await expect(t.client.handle(runId).result({ timeout: '10s' })).resolves.toMatch(/^tallied /);
    await link.click();
    await page.locator('[data-testid=run-status]', { hasText: 'completed' }).waitFor();
  });

  it('previews how many runs a backfill starts, then starts exactly those', async () => {
    await openSchedules();
    // Seven whole days before today (UTC midnights), so no slot sits on a bound and all are past.
    const to = new Date();
    to.setUTCHours(0, 0, 0, 0);
    const from = new Date(to.getTime() - 7 * 86_400_000);
    const slots = slotsBetween('0 9 * * 1-5', 'Europe/Paris', from, to);
    expect(slots.length).toBeGreaterThanOrEqual(5);

    const before = await db.count('runs', "workflow = 'schedule-tally'");
    await card('weekday-9am').getByTestId('schedule-backfill').click();
    await page.getByTestId('backfill-from').fill(from.toISOString().slice(0, 16));
    await page.getByTestId('backfill-to').fill(to.toISOString().slice(0, 16));
    await expect(page.getByTestId('confirm').isDisabled()).resolves.toBe(true); // no confirming before a preview
    await page.getByTestId('backfill-preview').click();
    const preview = page.getByTestId('backfill-preview-count');
    await preview.waitFor();
    await expect(preview.getAttribute('data-started')).resolves.toBe(String(slots.length));
    // The first and last slot the range holds, in the operator's zone (UTC here): a range off by a zone shows.
    const shown = (slot: Date) => slot.toISOString().slice(0, 19).replace('T', ' ');
    await expect(preview.getByTestId('backfill-preview-slots').innerText()).resolves.toBe(
      `: slots ${shown(slots[0])} to ${shown(slots[slots.length - 1])}`,
    );
    expect(await db.count('runs', "workflow = 'schedule-tally'")).toBe(before); // the preview started nothing
    await page.screenshot({ path: join(SHOTS, 'schedule-backfill.png') });

    await page.getByTestId('confirm').click();
    await expect(card('weekday-9am').getByTestId('backfill-result').getAttribute('data-started')).resolves.toBe(String(slots.length));
    for (const slot of slots) {
      await expect(t.client.handle(`schedule:weekday-9am:${slot.toISOString()}`).result({ timeout: '10s' })).resolves.toBe(
        `tallied ${slot.toISOString()}`,
      );
    }
  });

  it("lists the slots a schedule skipped, with their reasons, on the schedule's page", async () => {
    await eventually(async () => (await db.count('runs', "workflow = 'schedule-hold'")) > 0, 'the held schedule to start its run');
    await page.goto(`${t.url}/durable/#/schedules/every-second-held`);
    const skipped = page.locator('[data-testid=skipped-slot][data-reason=overlap]');
    await skipped.first().waitFor({ timeout: 15_000 }); // the page polls every 5 s
    const reasons = await page.getByTestId('skipped-slot').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-reason')));
    // Overlap while the held run waits; paused from the test before; missed when a pass the busy machine
    // delayed past a slot found two due, began the latest and recorded the other (catchUp 'latest').
    expect(reasons.filter((reason) => !['overlap', 'paused', 'missed'].includes(reason!))).toEqual([]);
    // Each recent run with its slot: the run's scheduledAt, which its id ends with.
    const slotRun = page.locator('[data-testid=schedule-run]:not([data-run-id*=":trigger:"])').first();
    const runId = (await slotRun.getAttribute('data-run-id'))!;
    await expect(slotRun.getByTestId('schedule-run-slot').getAttribute('datetime')).resolves.toBe(
      runId.slice('schedule:every-second-held:'.length),
    );
    await page.screenshot({ path: join(SHOTS, 'schedule-detail.png'), fullPage: true });
  });

  it('a trigger the overlap policy refuses names the unfinished run and starts nothing; the operator may start one beside it, or replace it, and an override gone stale is refused naming the run now last', async () => {
    await eventually(
      async () => (await api<{ schedule: ScheduleView }>('/schedules/every-second-held')).schedule.lastRun?.status === 'waiting',
      'the held run waiting',
    );
    const before = await db.count('runs', "workflow = 'schedule-hold'");
    await openSchedules();
    const held = card('every-second-held');
    await held.getByTestId('schedule-trigger').click();
    await held.getByTestId('schedule-action-error').filter({ hasText: 'SCHEDULE_OVERLAP' }).waitFor();
    const unfinished = (await held.getByTestId('trigger-overlap').locator('a').getAttribute('title'))!;
    expect(unfinished).toMatch(/^schedule:every-second-held:/);
    expect(await db.count('runs', "workflow = 'schedule-hold'")).toBe(before);

    await held.getByTestId('trigger-beside').click();
    const link = held.getByTestId('trigger-result').locator('a');
    await link.waitFor();
    const runId = (await link.getAttribute('title'))!;
    expect(runId).toMatch(/^schedule:every-second-held:trigger:/);
    await expect(held.getByTestId('trigger-overlap').count()).resolves.toBe(0);
    await eventually(async () => (await t.client.getRun(runId)).status === 'waiting', 'the run started beside it');
    expect((await t.client.getRun(unfinished)).status).toBe('waiting');

    // A prompt gone stale: it names the run beside, but another becomes the last run before the operator clicks.
    await held.getByTestId('schedule-trigger').click();
    await expect(held.getByTestId('trigger-overlap').locator('a').first().getAttribute('title')).resolves.toBe(runId);
    const newer = (await t.get(ScheduleService).trigger('every-second-held', { overlap: 'allow' })).runId;
    const runs = await db.count('runs', "workflow = 'schedule-hold'");
    await held.getByTestId('trigger-replace').click();
    // Refused, naming the newer run; the run the operator saw and the newer one both still wait.
    await held.getByTestId('trigger-overlap-changed').waitFor();
    await expect(held.getByTestId('trigger-overlap').locator('a').first().getAttribute('title')).resolves.toBe(newer);
    await expect(held.getByTestId('trigger-overlap-changed').locator('a').getAttribute('title')).resolves.toBe(runId);
    expect(await db.count('runs', "workflow = 'schedule-hold'")).toBe(runs);
    for (const id of [runId, newer]) expect((await t.client.getRun(id)).status).toBe('waiting');
    // Asked again, with the newer run on screen, the override replaces it.
    await held.getByTestId('trigger-replace').click();
    await held.getByTestId('trigger-result').locator('a').waitFor();
    expect((await t.client.getRun(newer)).status).toBe('cancelled');
    expect((await t.client.getRun(runId)).status).toBe('waiting');
  });

  it("flags a schedule whose workflow no live instance executes, by the server's decision: not one another instance executes though this one lacks it", async () => {
    // Two schedules of workflows this application does not register: one another live instance executes
    // (its heartbeat names it), one that nobody does (flagged).
    // Its heartbeat an hour ahead: live for as long as the test takes, whatever this app's lease.
    await db.query(
      `INSERT INTO durable.instances (id, heartbeat_at, detail) VALUES ('elsewhere', now() + interval '1 hour', '{"workflows": ["elsewhere-report"]}')`,
    );
    const insert = `INSERT INTO durable.schedules (name, workflow, cron, timezone, overlap, catchup_window_ms, catchup, input, jitter_ms, source, paused, workflow_missing, last_slot, next_fire_at)
                    VALUES ($1, $2, '0 3 1 1 *', 'UTC', 'skip', 60000, 'latest', '{}', 0, 'api', false, $3, now(), now() + interval '1 day')`;
    await db.query(insert, ['elsewhere', 'elsewhere-report', false]);
    await db.query(insert, ['retired', 'retired-report', true]);
    try {
      await page.goto(`${t.url}/durable/#/schedules`);
      await card('retired').getByTestId('workflow-missing').waitFor();
      await expect(card('retired').getByTestId('schedule-state').innerText()).resolves.toBe('held');
      // Held reads paused; its operator's pause is its own, set and cleared under the hold (it stays paused once its
      // workflow is back, or not): Pause is offered, saying it is held.
      const pause = card('retired').getByTestId('schedule-pause');
      await expect(pause.getAttribute('title')).resolves.toContain('It is held too');
      await pause.click();
      await card('retired').getByTestId('schedule-resume').waitFor();
      await expect(card('retired').getByTestId('schedule-state').innerText()).resolves.toBe('held · paused');
      expect(await db.count('schedules', `name = 'retired' AND paused AND workflow_missing`)).toBe(1);
      await card('retired').getByTestId('schedule-resume').click();
      await card('retired').getByTestId('schedule-pause').waitFor();
      await expect(card('retired').getByTestId('schedule-state').innerText()).resolves.toBe('held');
      expect(await db.count('schedules', `name = 'retired' AND NOT paused AND workflow_missing`)).toBe(1);
      await card('elsewhere').waitFor();
      await expect(card('elsewhere').getByTestId('schedule-state').innerText()).resolves.toBe('active');
      await expect(card('elsewhere').getByTestId('workflow-missing').count()).resolves.toBe(0);
      await expect(card('weekday-9am').getByTestId('workflow-missing').count()).resolves.toBe(0);
    } finally {
      await db.query(`DELETE FROM durable.schedules WHERE name IN ('elsewhere', 'retired')`);
      await db.query(`DELETE FROM durable.instances WHERE id = 'elsewhere'`);
    }
  });

  it("filters the runs list by schedule, from a schedule's link and from the filter", async () => {
    await openSchedules();
    await card('weekday-9am').getByTestId('schedule-runs-link').click();
    await expect(page.getByTestId('filter-schedule').inputValue()).resolves.toBe('weekday-9am');
    await page.getByTestId('run-row').first().waitFor();
    const workflowsShown = async () =>
      page.getByTestId('run-row').evaluateAll((rows) => rows.map((row) => row.querySelectorAll('td')[2]?.textContent));
    expect(new Set(await workflowsShown())).toEqual(new Set(['schedule-tally']));

    await page.getByTestId('filter-schedule').selectOption('every-second-held');
    await page.locator('[data-testid=run-row]', { hasText: 'schedule-hold' }).first().waitFor();
    await eventually(async () => (await workflowsShown()).every((workflow) => workflow === 'schedule-hold'), 'only the held runs');
  });
});

/** The slots of a cron in (from, to), from the same cron library the server uses. */
function slotsBetween(cron: string, timezone: string, from: Date, to: Date): Date[] {
  const job = new Cron(cron, { timezone, paused: true });
  const slots: Date[] = [];
  for (let next = job.nextRun(from); next && next < to; next = job.nextRun(next)) slots.push(next);
  return slots;
}
