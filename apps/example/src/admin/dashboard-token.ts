import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface DashboardToken {
  token: string;
  /** Where the token is kept between starts; absent when it came from DASHBOARD_TOKEN. */
  file?: string;
}

/**
 * The dashboard's bearer token: DASHBOARD_TOKEN when set; otherwise the one in `file`, generated at the
 * first start, so a restart does not sign everyone out of the dashboard. The file is created with
 * `wx` (never overwrites) and mode 0600; `file` lives under the git-ignored `.data/` by default.
 */
export function loadDashboardToken(file: string, fromEnv = process.env.DASHBOARD_TOKEN): DashboardToken {
  if (fromEnv) return { token: fromEnv };
  const kept = read(file);
  if (kept) return { token: kept, file };
  mkdirSync(dirname(file), { recursive: true });
  const token = randomBytes(16).toString('hex');
  try {
    writeFileSync(file, `${token}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    // Another process created it first: theirs wins. An empty or blank file is replaced.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const theirs = read(file);
    if (theirs) return { token: theirs, file };
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
  }
  return { token, file };
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
