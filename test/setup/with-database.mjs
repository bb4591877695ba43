// Runs a command with DATABASE_URL set: the given one, or an embedded PostgreSQL started for the
// command's lifetime. Usage: node test/setup/with-database.mjs <command> [args…]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from './embedded-postgres.mjs';

const [command, ...args] = process.argv.slice(2);
let cluster;
let dir;
if (!process.env.DATABASE_URL) {
  dir = mkdtempSync(join(tmpdir(), 'durable-pg-'));
  cluster = await startEmbeddedPostgres({ dir });
  process.env.DATABASE_URL = cluster.url;
}
const child = spawn(command, args, { stdio: 'inherit', env: process.env });
const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
await cluster?.stop();
if (dir) rmSync(dir, { recursive: true, force: true });
process.exit(code);
