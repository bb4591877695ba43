import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Page } from 'playwright-core';
import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { Breaks, NapLong, Review } from '../fixtures/operator.workflows';
import { dashboardSuite } from '../setup/browser';
import { DurableTestApp, eventually, uniqueSchema } from '../setup/durable-app';

const TOKEN = 'look-token-0123456789abcdef';
/** Screenshots go to SCREENSHOTS (docs/images when refreshing the docs), else to a temporary folder. */
const SHOTS = process.env.SCREENSHOTS ?? join(tmpdir(), 'durable-screenshots');
/** A zone off UTC by a half hour and without daylight saving: local and UTC never read alike. */
const ZONE = 'Australia/Darwin';
const OFFSET = 'UTC+09:30';
const OFFSET_MS = 570 * 60_000;
/** axe-core, served from the dashboard's own origin: its Content Security Policy allows no inline script. */
const AXE = require.resolve('axe-core/axe.min.js');

@Workflow('look-hold')
export class Hold implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    return ctx.waitForSignal('go');
  }
}

/** Two children whose ids share the parent's id and differ only at their end: `<parent>/check-north`, `<parent>/check-south`. */
@Workflow('look-siblings')
export class Siblings implements DurableWorkflow<null, unknown> {
  async run(_: null, ctx: WorkflowContext) {
    const north = await ctx.startChild(Hold, null, { step: 'check-north' });
    const south = await ctx.startChild(Hold, null, { step: 'check-south' });
    return [await north.result(), await south.result()];
  }
}

@Workflow('look-queued', { queue: 'look' })
export class Queued implements DurableWorkflow<null, null> {
  async run() {
    return null;
  }
}

/** 'YYYY-MM-DD HH:mm:ss' of an instant shifted by `offsetMs`: the UTC reading, or the zone's. */
const sortable = (iso: string, offsetMs = 0) => new Date(Date.parse(iso) + offsetMs).toISOString().slice(0, 19).replace('T', ' ');

/** The page's globals these checks read; the suites compile without the DOM library, so typed here. */
interface InPage {
  document: { body: unknown; activeElement: { getAttribute(name: string): string | null } | null };
  navigator: { clipboard: { readText(): Promise<string> } };
  getComputedStyle(element: unknown): { backgroundColor: string; color: string };
  axe?: { run(context: unknown, options: object): Promise<{ violations: AxeViolation[] }> };
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

describe('how the dashboard looks and reads: ids, times, dark mode, narrow screens, shortcuts, accessibility', () => {
  const suite = dashboardSuite({
    schema: uniqueSchema(),
    token: TOKEN,
    providers: [Hold, Siblings, Queued, Review, NapLong, Breaks],
    options: { inlineWaitMs: 0, queues: { look: { concurrency: 2 } } },
    page: { timezoneId: ZONE },
  });
  const { db } = suite;
  let t: DurableTestApp;
  let page: Page;
  let parent: string;
  let north: string;
  let south: string;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = suite.app;
    page = suite.page;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(t.url).origin });
    await page.context().route('**/durable/axe.min.js', (route) => route.fulfill({ path: AXE, contentType: 'text/javascript' }));
    parent = (await t.client.start(Siblings, null)).runId;
    [north, south] = [`${parent}/check-north`, `${parent}/check-south`];
    for (const runId of [north, south]) await waitingFor(runId, 'signal');
  });

  const waitingFor = (runId: string, kind: string) =>
    eventually(async () => (await t.client.getRun(runId).catch(() => undefined))?.waiting?.kind === kind, `${runId} to wait for a ${kind}`);
  const open = async (hash: string, ready: string) => {
    await page.goto(`${t.url}/durable/#${hash}`);
    await page.locator(ready).first().waitFor();
  };
  const openRun = (runId: string) => open(`/runs/${encodeURIComponent(runId)}`, `[data-testid=run-id]:text-is("${runId}")`);
  const row = (runId: string) => page.locator(`[data-testid=run-row][data-run-id="${runId}"]`);
  const clipboard = () => page.evaluate(() => (globalThis as unknown as InPage).navigator.clipboard.readText());
  const activeTestId = () =>
    page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('data-testid') ?? null);
  const hash = () => new URL(page.url()).hash;

  it('shows the end of long ids, so that sibling runs read apart, with the whole id on hover and a button that copies it', async () => {
    await open('/runs?workflow=look-hold', `[data-testid=run-row][data-run-id="${south}"]`);
    const link = (runId: string) => row(runId).locator('a').first();
    // What is on screen: the id without its elided middle (the middle is still text, out of sight).
    const shown = (runId: string) =>
      link(runId).evaluate((a) =>
        [...a.childNodes]
          .filter((node) => !(node.nodeType === 1 && node.hasAttribute('data-elided')))
          .map((node) => node.textContent)
          .join(''),
      );
    const [northShown, southShown] = [await shown(north), await shown(south)];
    expect(northShown).not.toBe(southShown);
    expect(northShown).toMatch(new RegExp(`^${parent.slice(0, 8)}.*/check-north$`));
    expect(southShown).toMatch(/\/check-south$/);
    expect(northShown.length).toBeLessThan(north.length);
    // The pixels differ too: the old cut at the end showed both as the parent's id.
    expect(Buffer.compare(await link(north).screenshot(), await link(south).screenshot())).not.toBe(0);
    await expect(link(north).getAttribute('title')).resolves.toBe(north);
    // Read aloud, selected and copied as a whole.
    await expect(link(north).innerText()).resolves.toBe(north);
    await expect(row(north).getByRole('link', { name: north, exact: true }).count()).resolves.toBe(1);
    const selected = await link(north).evaluate((a) => {
      const range = a.ownerDocument.createRange();
      range.selectNodeContents(a);
      const selection = a.ownerDocument.defaultView.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      return selection.toString();
    });
    expect(selected).toBe(north);
    const middle = await link(north).locator('[data-elided]').boundingBox();
    expect(middle!.width).toBeLessThanOrEqual(1);

    const copy = row(south).getByTestId('copy-id');
    await expect(copy.getAttribute('aria-label')).resolves.toBe(`Copy run id: ${south}`);
    await copy.click();
    await row(south).locator(`[data-testid=copy-id][data-copied="${south}"]`).waitFor();
    await expect(clipboard()).resolves.toBe(south);

    // The run page: the whole id in its header, and the same button beside it.
    await openRun(north);
    await page.locator('header').getByTestId('copy-id').first().click();
    await page.locator(`[data-testid=copy-id][data-copied="${north}"]`).waitFor();
    await expect(clipboard()).resolves.toBe(north);
  });

  it("shows every time in the operator's zone, and its UTC instant on hover", async () => {
    const run = await t.client.getRun(north);
    const created = run.createdAt.toISOString();
    await open('/', '[data-testid=time-zone]');
    await expect(page.getByTestId('time-zone').innerText()).resolves.toBe(ZONE);

    await openRun(north);
    const createdTime = page.locator(`time[datetime="${created}"]`).first();
    await expect(createdTime.innerText()).resolves.toBe(sortable(created, OFFSET_MS));
    const title = await createdTime.getAttribute('title');
    expect(title).toContain(`${sortable(created, OFFSET_MS)} ${ZONE} (${OFFSET})`);
    expect(title).toContain(`${sortable(created)} UTC`);
    expect(title).toContain(created);

    // Every time on these pages carries the same hover: local with its zone, then UTC.
    const pages: Array<[string, string]> = [
      [`/runs/${encodeURIComponent(north)}?tab=history`, '[data-testid=history-row]'],
      [`/runs/${encodeURIComponent(north)}?tab=timeline`, '[data-testid=timeline-axis] time'],
      ['/runs?status=all', '[data-testid=run-row]'],
      ['/', '[data-testid=instances]'],
      ['/schedules', '[data-testid=fire-time]'],
    ];
    for (const [path, ready] of pages) {
      await open(path, ready);
      const times = await page
        .locator('time')
        .evaluateAll((all) => all.map((time) => [time.getAttribute('datetime'), time.getAttribute('title')]));
      expect(times.length).toBeGreaterThan(0);
      for (const [iso, hover] of times) {
        expect({ path, hover }).toEqual({
          path,
          hover: expect.stringContaining(`${sortable(iso!)} UTC · ${new Date(iso!).toISOString()}`),
        });
        expect({ path, hover }).toEqual({ path, hover: expect.stringContaining(`${ZONE} (${OFFSET})`) });
      }
    }
  });

  it("follows the system's dark scheme on every page, through the colour tokens", async () => {
    const background = () =>
      page.evaluate(() => {
        const { getComputedStyle, document } = globalThis as unknown as InPage;
        return getComputedStyle(document.body).backgroundColor;
      });
    const tableColours = () =>
      page.getByTestId('runs-table').evaluate((table) => {
        const style = (globalThis as unknown as InPage).getComputedStyle(table);
        return [style.backgroundColor, style.color];
      });
    await page.emulateMedia({ colorScheme: 'light' });
    await open('/runs', `[data-testid=run-row][data-run-id="${north}"]`);
    expect(await background()).toBe('rgb(245, 246, 248)');
    const light = await tableColours();

    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      expect(await background()).toBe('rgb(15, 18, 24)');
      const dark = await tableColours();
      expect(dark).not.toEqual(light);
      expect(dark).toEqual(['rgb(22, 26, 33)', 'rgb(230, 233, 239)']);
      // For the docs: a parent waiting for its children, the siblings' ids apart.
      await open(`/runs/${encodeURIComponent(parent)}?tab=children`, '[data-testid=child-row]');
      await page.mouse.move(0, 0);
      await page.screenshot({ path: join(SHOTS, 'dashboard-dark.png') });
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
    }
  });

  it('takes every colour of the components from the tokens: no colour is written in a component stylesheet', () => {
    const root = join(__dirname, '../../apps/dashboard/src');
    const sheets = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? sheets(join(dir, entry.name)) : entry.name.endsWith('.module.css') ? [join(dir, entry.name)] : [],
      );
    const colours = sheets(root).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /#[0-9a-f]{3,8}\b|\b(rgba?|hsla?|oklch|lab|lch)\(|(?<![\w-])(white|black)(?![\w-])/i.test(line)
            ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(colours).toEqual([]);
  });

  it('keeps the status and what a run waits for in view on an 800 px wide screen', async () => {
    await page.setViewportSize({ width: 800, height: 700 });
    try {
      const inView = async (what: string, box: { x: number; y: number; width: number; height: number } | null) => {
        expect({ what, box }).toEqual({ what, box: expect.objectContaining({ x: expect.any(Number) }) });
        expect({ what, left: box!.x >= 0, right: box!.x + box!.width <= 800 }).toEqual({ what, left: true, right: true });
      };
      await open('/runs', `[data-testid=run-row][data-run-id="${north}"]`);
      const status = row(north).getByTestId('status');
      const wait = row(north).getByTestId('wait-reason');
      await inView('status in the list', await status.boundingBox());
      await inView('waiting for in the list', await wait.boundingBox());
      expect((await wait.boundingBox())!.width).toBeGreaterThan(150);
      await expect(wait.innerText()).resolves.toMatch(/signal\s+go/);
      // The list is not scrolled sideways to show them: the less needed columns gave way.
      await expect(
        page.getByTestId('runs-table').evaluate((table) => table.parentElement!.scrollWidth <= table.parentElement!.clientWidth),
      ).resolves.toBe(true);

      await openRun(north);
      await inView('status on the run page', await page.getByTestId('run-status').boundingBox());
      await inView('waiting for on the run page', await page.getByTestId('wait-reason').boundingBox());
      await inView('the signal form', await page.getByTestId('signal-form').boundingBox());
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('moves around with the keyboard: g then a letter opens a page, / the runs search, ? the list; keys typed in a field stay text', async () => {
    await open('/', '[data-testid=stat-waiting]');
    await page.keyboard.press('g');
    await page.keyboard.press('r');
    await page.waitForURL((url) => url.hash.startsWith('#/runs'));
    await page.keyboard.press('g');
    await page.keyboard.press('o');
    await page.waitForURL((url) => url.hash === '#/');
    await page.getByTestId('stat-waiting').waitFor();

    await page.keyboard.press('/');
    await page.waitForURL((url) => url.hash.startsWith('#/runs'));
    await eventually(async () => (await activeTestId()) === 'filter-q', 'the runs search to have the focus');
    await page.keyboard.type('g o ?');
    await expect(page.getByTestId('filter-q').inputValue()).resolves.toBe('g o ?');
    expect(hash()).toMatch(/^#\/runs/);
    await expect(page.getByTestId('shortcuts-help').count()).resolves.toBe(0);

    await page.getByTestId('filter-q').fill('');
    await page.getByTestId('filter-q').blur();
    await page.keyboard.press('?');
    const help = page.getByTestId('shortcuts-help');
    await help.waitFor();
    const listed = await help.getByTestId('shortcut').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-keys')));
    expect(listed).toEqual(expect.arrayContaining(['?', '/', 'g o', 'g r', 'g w', 'g s', 'g q']));
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
  });

  it("binds a run's actions to keys, each only while it applies: s and m go to the forms, r, c and t ask, then resume, cancel or retry", async () => {
    const listed = async () => {
      await page.keyboard.press('?');
      const keys = await page
        .getByTestId('shortcuts-help')
        .getByTestId('shortcut')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-keys')));
      await page.keyboard.press('Escape');
      await page.getByTestId('shortcuts-help').waitFor({ state: 'detached' });
      return keys;
    };

    // A run waiting for a signal: the forms, resume and cancel; no retry.
    const review = await t.client.start(Review, { orderId: 'keys' });
    await waitingFor(review.runId, 'signal');
    await openRun(review.runId);
    await expect(listed()).resolves.toEqual(expect.arrayContaining(['s', 'm', 'r', 'c']));
    await expect(listed()).resolves.not.toContain('t');
    // The signal has a schema: `s` goes to the form's first field; in the JSON editor, to the text.
    // The form loads lazily: the key is pressed once its field is there (else it has nothing to focus).
    await page.locator('#signal_approved').waitFor();
    await page.keyboard.press('s');
    await eventually(
      () => page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('id') === 'signal_approved'),
      "the form's first field to have the focus",
    );
    await page.getByTestId('signal-mode-json').click();
    const template = await page.getByTestId('signal-payload').inputValue();
    await page.keyboard.press('s');
    await eventually(async () => (await activeTestId()) === 'signal-payload', 'the signal payload to have the focus');
    await page.keyboard.press('Control+End');
    await page.keyboard.type('rc');
    await expect(page.getByTestId('signal-payload').inputValue()).resolves.toBe(`${template}rc`);
    await page.getByTestId('run-id').click(); // out of the field
    await page.keyboard.press('m');
    await eventually(async () => (await activeTestId()) === 'message-key', 'the message key to have the focus');
    await page.getByTestId('run-id').click();
    await page.keyboard.press('c');
    const confirm = page.getByTestId('confirm');
    await confirm.waitFor();
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    expect((await t.client.getRun(review.runId)).status).toBe('waiting');
    await t.client.cancel(review.runId);

    // A sleeping run: r asks, and its confirmation ends the sleep (a key typed by mistake changes nothing: WCAG 2.1.4).
    const nap = await t.client.start(NapLong, null);
    await waitingFor(nap.runId, 'sleep');
    await openRun(nap.runId);
    await page.keyboard.press('r');
    await confirm.waitFor();
    expect((await t.client.getRun(nap.runId)).status).toBe('waiting'); // before: resumed at the key
    await confirm.click();
    await expect(nap.result({ timeout: '10s' })).resolves.toBe('rested');

    // A failed run: t asks, then retries it; r has nothing to resume.
    const broken = await t.client.start(Breaks, null);
    await expect(broken.result()).rejects.toThrow();
    await openRun(broken.runId);
    await expect(listed()).resolves.toEqual(expect.arrayContaining(['t']));
    await expect(listed()).resolves.not.toContain('r');
    await page.keyboard.press('t');
    await confirm.waitFor();
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    expect(await db.count('history', "run_id = $1 AND event = 'retried'", [broken.runId])).toBe(0);
    await page.keyboard.press('t');
    await confirm.click();
    await eventually(async () => (await db.count('history', "run_id = $1 AND event = 'retried'", [broken.runId])) === 1, 'the retry');
  });

  it('has no serious or critical accessibility violation on any page, in light or dark', async () => {
    const schedule = 'approval'; // NapLong's paused schedule
    const review = await t.client.start(Review, { orderId: 'axe' });
    const broken = await t.client.start(Breaks, null);
    await waitingFor(review.runId, 'signal');
    await expect(broken.result()).rejects.toThrow();
    const pages: Array<[string, string, string]> = [
      ['overview', '/', '[data-testid=stat-waiting]'],
      ["the overview's charts", '/', '[data-testid=chart-throughput] [data-testid=chart-point]'],
      ['runs', '/runs', `[data-testid=run-row][data-run-id="${north}"]`],
      ['a waiting run', `/runs/${encodeURIComponent(north)}`, '[data-testid=signal-form]'],
      ['its signals', `/runs/${encodeURIComponent(north)}?tab=signals`, '[data-testid=pending-signal]'],
      ['its history', `/runs/${encodeURIComponent(north)}?tab=history`, '[data-testid=history-row]'],
      ['a parent and its children', `/runs/${encodeURIComponent(parent)}?tab=children`, '[data-testid=child-row]'],
      [
        'its timeline, a lane per child',
        `/runs/${encodeURIComponent(parent)}?tab=timeline`,
        '[data-testid=timeline-child-lane] [data-testid=timeline-status]',
      ],
      ['a signal form built from its schema', `/runs/${encodeURIComponent(review.runId)}`, '[data-testid=signal-schema-form] input'],
      ['a failed run, its error and stack', `/runs/${encodeURIComponent(broken.runId)}`, '[data-testid=run-failure]'],
      ['workflows', '/workflows', '[data-testid=workflow]'],
      ['schedules', '/schedules', '[data-testid=schedule]'],
      ['a schedule', `/schedules/${schedule}`, '[data-testid=skipped-panel]'],
      ['queues', '/queues', '[data-testid=queue-look]'],
      ['an unknown address', '/nowhere', 'main h1'],
    ];
    const axe = async (on: Page, what: string): Promise<string[]> => {
      if (!(await on.evaluate(() => 'axe' in globalThis))) await on.addScriptTag({ url: `${t.url}/durable/axe.min.js` });
      const violations = await on.evaluate(async () => {
        const { axe, document } = globalThis as unknown as InPage;
        return (await axe!.run(document, { resultTypes: ['violations'] })).violations;
      });
      return violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${what}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
    };

    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [what, path, ready] of pages) {
        await open(path, ready);
        found.push(...(await axe(page, `${what} (${scheme})`)));
      }
      // The shortcuts overlay, a dialog over the page.
      await page.keyboard.press('?');
      await page.getByTestId('shortcuts-help').waitFor();
      found.push(...(await axe(page, `the shortcuts overlay (${scheme})`)));
      await page.keyboard.press('Escape');
      await page.getByTestId('shortcuts-help').waitFor({ state: 'detached' });

      // The runs list's own controls in the states they take: a custom range, sorted by last change, a
      // summary column picked from its menu, updates paused; a bulk action by filter asking for its count;
      // the top bar while the event stream is down.
      const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
      await open(`/runs?status=all&sort=updated&createdAfter=${encodeURIComponent(hourAgo)}`, '[data-testid=filter-from]');
      await page.getByTestId('columns-menu').click();
      await page.getByTestId('summary-field').selectOption({ index: 1 });
      await page.getByTestId('summary-header').waitFor();
      await page.getByTestId('live-pause').click();
      found.push(...(await axe(page, `runs: a range, by last change, a summary column, paused (${scheme})`)));
      await page.getByTestId('live-resume').click();
      await page.getByTestId('columns-menu').click();
      await page.getByTestId('bulk-scope-filter').check();
      await page.getByTestId('bulk-cancel').click();
      await page.getByTestId('confirm-count').waitFor();
      found.push(...(await axe(page, `a bulk action by filter (${scheme})`)));
      await page.keyboard.press('Escape');
      await page.getByTestId('bulk-targets').waitFor({ state: 'detached' });
      await page.route('**/durable/api/events', (route) => route.abort());
      try {
        await page.reload();
        await page.locator('[data-testid=live-status][data-mode=down]').waitFor();
        found.push(...(await axe(page, `live updates down, the pages polling (${scheme})`)));
      } finally {
        await page.unroute('**/durable/api/events');
      }
      // The stream's own next try brings it back (live-and-list tests the Retry button; a click here would
      // race that try, which removes the button).
      await page.locator('[data-testid=live-status][data-mode=live]').waitFor();

      // The sign-in page, in a browser context of its own: no token yet.
      const context = await page.context().browser()!.newContext({ colorScheme: scheme });
      try {
        await context.route('**/durable/axe.min.js', (route) => route.fulfill({ path: AXE, contentType: 'text/javascript' }));
        const login = await context.newPage();
        await login.goto(`${t.url}/durable/`);
        await login.getByTestId('login-token').waitFor();
        found.push(...(await axe(login, `sign-in (${scheme})`)));
      } finally {
        await context.close();
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(found).toEqual([]);
  }, 120_000); // thirty pages through axe, light and dark: half a minute on a quiet machine, more beside the other suites
});
