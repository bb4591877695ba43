import { Browser, chromium } from 'playwright-core';

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
