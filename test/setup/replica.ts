import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const run = promisify(execFile);

/** A primary and its streaming replica, started for one test file from the Debian install's server programs. */
export interface ReplicatedCluster {
  primaryUrl: string;
  replicaUrl: string;
  /** Stops or restarts WAL replay on the replica: what it serves stays as it was meanwhile. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  stop(): Promise<void>;
}

/** The server programs of the newest PostgreSQL the machine has installed (Debian: /usr/lib/postgresql/<major>/bin). */
export function serverPrograms(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const major = readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'bin', 'pg_basebackup')))
    .sort((a, b) => Number(b) - Number(a))[0];
  return major && join(root, major, 'bin');
}

/**
 * initdb, a primary, pg_basebackup -R and the replica, in a temporary folder, on two free ports.
 * Postgres refuses to run as root: as root, every program runs as the `postgres` system user.
 */
export async function startReplicatedCluster(): Promise<ReplicatedCluster> {
  const bin = serverPrograms();
  if (!bin) throw new Error('No PostgreSQL server programs under /usr/lib/postgresql (apt-get install postgresql).');
  const dir = mkdtempSync(join(tmpdir(), 'durable-replica-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout), Number(gid));
  }
  const pg = (program: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args]) : run(join(bin, program), args);
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const start = (data: string, port: number) =>
    pg('pg_ctl', ['-D', data, '-l', `${data}.log`, '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  const primary = join(dir, 'primary');
  const replica = join(dir, 'replica');
  await pg('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '--no-sync']);
  await start(primary, primaryPort);
  await pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replica, '-R', '-X', 'stream']);
  await start(replica, replicaPort);
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
  const onReplica = async (sql: string) => {
    const client = new Client(replicaUrl);
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}/postgres`,
    replicaUrl,
    pauseReplay: () => onReplica('SELECT pg_wal_replay_pause()'),
    resumeReplay: () => onReplica('SELECT pg_wal_replay_resume()'),
    async stop() {
      for (const data of [replica, primary]) await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
    server.on('error', reject);
  });
}
