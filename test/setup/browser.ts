import { Browser, BrowserContextOptions, chromium, Page } from 'playwright-core';

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
