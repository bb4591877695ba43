import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Runs a TypeScript file of the repository as its own Node process (ts-node, paths as in jest). */
export function spawnTs(file: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['-r', 'ts-node/register', '-r', 'tsconfig-paths/register', join(ROOT, file)], {
    cwd: ROOT,
    env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true', TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Resolves when the process prints "ready". */
export function ready(child: ChildProcess, ms = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`process ${child.pid} did not get ready in ${ms} ms`)), ms);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => reject(new Error(`process ${child.pid} exited with ${code} before it was ready`)));
  });
}

/** Resolves with the exit code once the process has exited; rejects if it is still alive after `ms`. */
export function exited(child: ChildProcess, ms = 30_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`process ${child.pid} had not exited after ${ms} ms`)), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** SIGKILL, and wait until the process is gone. */
export function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
