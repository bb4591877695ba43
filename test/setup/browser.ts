import type { Provider } from '@nestjs/common';
import type { DurableModuleOptions } from 'nestjs-durable';
import { Browser, BrowserContextOptions, chromium, Page } from 'playwright-core';
import { Db, DurableTestApp, Platform, startApp } from './durable-app';

/**
 * Debian's Chromium, headless, driven by playwright-core (no browser is ever downloaded). The flags
 * keep it off the network: this machine has none, and Chromium's background traffic would fail.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A page of the dashboard at `url` (the app's base URL), signed in with `token`. Page errors and
 * unexpected dialogs are pushed to `errors`, which a suite expects empty after each test.
 */
export async function signedInPage(
  browser: Browser,
  url: string,
  token: string,
  errors: string[],
  options: BrowserContextOptions = {},
): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, ...options });
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('dialog', (dialog) => {
    errors.push(`unexpected dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await page.goto(`${url}/durable/`);
  await page.getByTestId('login-token').fill(token);
  await page.getByTestId('login-submit').click();
  await page.getByTestId('nav-runs').waitFor();
  return page;
}

/**
 * The setup every dashboard browser suite shares: before the suite, the app (listening, the dashboard
 * behind `token`, on Express unless `platform` says Fastify), Debian's Chromium and a signed-in page;
 * after it, all closed and the schema dropped; after each test, no page error. Read `app` and `page`
 * inside hooks and tests.
 */
export function dashboardSuite(args: {
  schema: string;
  token: string;
  providers: Provider[];
  options?: Partial<DurableModuleOptions>;
  page?: BrowserContextOptions;
  platform?: Platform;
}): { readonly app: DurableTestApp; readonly page: Page; readonly db: Db } {
  const db = new Db(args.schema);
  const errors: string[] = [];
  let app: DurableTestApp | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    app = await startApp({
      schema: args.schema,
      providers: args.providers,
      listen: true,
      options: { dashboard: { auth: { token: args.token } }, ...args.options },
      platform: args.platform,
    });
    browser = await launchChromium();
    page = await signedInPage(browser, app.url, args.token, errors, args.page);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await db.dropSchema();
  });
  afterEach(() => expect(errors).toEqual([]));
  return {
    get app() {
      return app!;
    },
    get page() {
      return page!;
    },
    db,
  };
}
