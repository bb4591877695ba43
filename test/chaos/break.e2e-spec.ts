import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Evidence that can fail: the harness, run against a library with signal deduplication skipped
 * (breaks.ts), must fail, and on the signals check. One phase of the `ci` schedule (about 40 s on an
 * idle 2-core machine): it also falls short of the minimums, which is why the signals check's own
 * violations are what this test looks for.
 */
jest.setTimeout(300_000);

const ROOT = join(__dirname, '..', '..');

function chaos(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register', '-r', 'tsconfig-paths/register', join(ROOT, 'test/chaos/run.ts'), ...args],
      {
        cwd: ROOT,
        env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true', TS_NODE_PROJECT: join(ROOT, 'tsconfig.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('chaos harness against a broken library', () => {
  it('fails on the signals check when redelivered signals are no longer deduplicated', async () => {
    const { code, output } = await chaos(['--profile', 'ci', '--seed', '7', '--phases', '1', '--break', 'signal-dedup']);
    // A failed session keeps its directory (logs, record, the database's data) for a look: not this one.
    const kept = /kept in (\S*chaos-7-\w+)$/m.exec(output)?.[1];
    if (kept) rmSync(kept, { recursive: true, force: true });
    expect(output).toContain('the library is broken on purpose (signal-dedup)');
    expect(code).toBe(1);
    expect(output).toMatch(/\[signals\] \S+: signal approval was accepted [2-9] times/);
    expect(output).toMatch(/\[signals\] \S+: signal-delivered is in the history [2-9] times/);
    expect(output).toMatch(/\[signals\] \S+: the run used payload .*, not the first one/);
  });
});
