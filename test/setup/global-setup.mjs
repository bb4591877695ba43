// A real PostgreSQL for the suites: DATABASE_URL when given, else an embedded cluster started here.
// Each test file then works in a schema of its own (see test/setup/durable-app.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from './embedded-postgres.mjs';

export default async function globalSetup() {
  // The browser suite needs the built dashboard UI; build it once when it is missing.
  if (!existsSync('dist/dashboard-ui/index.html')) {
    execFileSync(
      process.execPath,
      ['node_modules/vite/bin/vite.js', 'build', '--config', 'apps/dashboard/vite.config.ts', '--logLevel', 'warn'],
      { stdio: 'inherit' },
    );
  }
  if (process.env.DATABASE_URL) return;
  const dir = mkdtempSync(join(tmpdir(), 'durable-test-pg-'));
  const cluster = await startEmbeddedPostgres({ dir });
  process.env.DATABASE_URL = cluster.url;
  globalThis.__embeddedPostgres = cluster;
  console.log(`\nembedded PostgreSQL started at ${cluster.url} (set DATABASE_URL to use your own)`);
}
