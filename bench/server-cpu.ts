import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Server } from './database';

/** The postmaster's pid, from its data directory (readable when the bench runs beside the server, as root or its owner). */
export async function postmasterPid(server: Server): Promise<number> {
  const [{ dir }] = await server.query<{ dir: string }>(`SELECT current_setting('data_directory') AS dir`);
  return Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** CPU time (user + system, ms) of the postmaster and its children, living and exited, from /proc. */
export function serverCpuMs(postmaster: number): number {
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(entry);
      if (pid !== postmaster && Number(fields[1]) !== postmaster) continue;
      total += (Number(fields[11]) + Number(fields[12])) * tick;
      // The postmaster's reaped children (backends that exited, a pool's idle connections among them).
      if (pid === postmaster) total += (Number(fields[13]) + Number(fields[14])) * tick;
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}
