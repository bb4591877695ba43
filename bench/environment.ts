import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  /** 1-minute load average sampled at each section's start and at the end: other work on the machine shows here. */
  loadAverage: { start: number; max: number; end: number };
}

export function machine(loads: number[]): Machine {
  const list = cpus();
  return {
    cpu: list[0]?.model ?? 'unknown',
    cores: list.length,
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    os: `${type()} ${release()}`,
    node: process.version,
    loadAverage: { start: loads[0] ?? loadavg()[0], max: Math.max(...loads, loadavg()[0]), end: loadavg()[0] },
  };
}

/** The versions the figures belong to; nestjs-durable also by commit, marked when the tree had changes. */
export function versions(): Record<string, string> {
  const pkg = (name: string) => {
    try {
      return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return 'not installed';
    }
  };
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    const dirty = execSync('git status --porcelain -- libs', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    if (dirty) commit += ' + uncommitted changes in libs/';
  } catch {
    // not a git checkout
  }
  return {
    'nestjs-durable': `${pkg('nestjs-durable')} (${commit})`,
    '@dbos-inc/dbos-sdk': pkg('@dbos-inc/dbos-sdk'),
    '@nestjs/core': pkg('@nestjs/core'),
    typeorm: pkg('typeorm'),
    pg: pkg('pg'),
    typescript: pkg('typescript'),
  };
}
