#!/usr/bin/env node
// The docs' screenshots, taken of the example app as a newcomer sees it: `npm run build`, then
// `node scripts/screenshots.mjs`. It starts the example with --seed on a fresh embedded PostgreSQL
// (a temporary folder, so your .data/ is left alone), signs in to its dashboard in Debian's Chromium
// and writes docs/images/{overview,runs,run-detail,workflows}.png, then stops everything.
// Env: SCREENSHOTS (the folder, default docs/images), CHROMIUM_PATH (default /usr/bin/chromium).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(root, process.env.SCREENSHOTS ?? 'docs/images');
const token = 'screenshots-token-0123456789';
const data = mkdtempSync(join(tmpdir(), 'durable-screenshots-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

const app = spawn(process.execPath, [join(root, 'scripts/start-example.mjs'), '--seed'], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, DATABASE_URL: '', PORT: String(port), DASHBOARD_TOKEN: token, EXAMPLE_DATA_DIR: join(data, 'postgres') },
});
const exited = new Promise((done) => app.on('exit', done));
let browser;
try {
  await until(async () => (await fetch(`${base}/durable/api/session`).catch(() => undefined))?.ok, 'the example to listen', 120_000);
  const api = async (path) => (await fetch(`${base}/durable/api${path}`, { headers: { authorization: `Bearer ${token}` } })).json();
  // The seed's runs settle: one failed for good, several waiting for an operator.
  await until(async () => (await api('/runs?status=failed')).runs.length > 0, 'a seeded run to fail', 60_000);
  await until(async () => (await api('/runs?status=waiting')).runs.length >= 3, 'the seeded runs to wait', 60_000);

  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1360, height: 860 }, colorScheme: 'light' });
  await page.goto(`${base}/durable/`);
  await page.getByTestId('login-token').fill(token);
  await page.getByTestId('login-operator').fill('Ada (ops)');
  await page.getByTestId('login-submit').click();
  await page.getByTestId('nav-runs').waitFor();
  // The page holds its live-update stream open, so "network idle" never comes: each shot waits for
  // what it shows, then for the fetches it started to settle.
  const shot = async (name, ready) => {
    await page.getByTestId(ready).first().waitFor();
    await page.mouse.move(0, 0); // no tooltip where the last click left the pointer
    await page.waitForFunction(() => document.querySelectorAll('[aria-busy="true"]').length === 0);
    await page.waitForTimeout(300); // charts and the timeline animate in
    await page.screenshot({ path: join(out, `${name}.png`) });
    console.log(`wrote ${join(out, `${name}.png`)}`);
  };

  await page.goto(`${base}/durable/#/`);
  await shot('overview', 'chart-point');
  await page.goto(`${base}/durable/#/runs`);
  await shot('runs', 'run-row');
  // The order waiting for a manager's approval: a select of approve, reject and an escalation timer.
  const approval = (await api('/runs?status=waiting&workflow=fulfill-order&waitingFor=select')).runs[0];
  await page.goto(`${base}/durable/#/runs/${encodeURIComponent(approval.runId)}`);
  await page.getByTestId('run-status').waitFor();
  await page.getByTestId('tab-journal').click();
  await shot('run-detail', 'journal-step');
  await page.goto(`${base}/durable/#/workflows`);
  await shot('workflows', 'workflow');
} finally {
  await browser?.close();
  app.kill('SIGINT');
  await exited;
  rmSync(data, { recursive: true, force: true });
}

async function until(check, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}
