#!/usr/bin/env node
// `npm start`: runs the example app (apps/example). Without DATABASE_URL it first starts an embedded
// PostgreSQL whose data lives in .data/postgres inside the checkout, kept between starts, so a second
// start resumes the runs of the first. Arguments (e.g. --seed) are passed to the app. `npm start` runs
// scripts/build-if-changed.mjs first, which rebuilds only what changed.
// Env: DATABASE_URL, PORT (3000), EXAMPLE_DATA_DIR (.data/postgres), EXAMPLE_ENTRY (the compiled main.js);
// the app reads DASHBOARD_TOKEN (else it generates one once and keeps it in .data/dashboard-token).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const entry = process.env.EXAMPLE_ENTRY ?? join(root, 'dist/apps/example/main.js');

/** The server runs in a detached process (see embedded-postgres-host.mjs): a Ctrl-C reaches the app, not it. */
let host;
if (!process.env.DATABASE_URL) {
  const dir = resolve(root, process.env.EXAMPLE_DATA_DIR ?? '.data/postgres');
  mkdirSync(dirname(dir), { recursive: true });
  const started = Date.now();
  host = spawn(process.execPath, [join(root, 'scripts/embedded-postgres-host.mjs'), dir], {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await Promise.race([once(host, 'message'), once(host, 'exit').then(() => null)]);
  if (!ready) process.exit(1); // the host printed why
  process.env.DATABASE_URL = ready[0].url;
  console.log(`Embedded PostgreSQL ready in ${Date.now() - started} ms (data in ${dir}; set DATABASE_URL to use your own).`);
}

const nodeArgs = entry.endsWith('.ts') ? ['-r', 'ts-node/register', '-r', 'tsconfig-paths/register'] : [];
const app = spawn(process.execPath, [...nodeArgs, entry, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { TS_NODE_TRANSPILE_ONLY: 'true', TS_NODE_PROJECT: join(root, 'tsconfig.json'), ...process.env },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => app.kill(signal));
const code = await new Promise((done) => app.on('exit', (c, signal) => done(c ?? (signal ? 0 : 1))));
if (host?.connected) {
  const stopped = once(host, 'exit');
  host.disconnect();
  await stopped;
}
process.exit(code);
