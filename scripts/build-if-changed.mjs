#!/usr/bin/env node
// `npm start` builds through this script: it runs each build step (the package.json scripts build:lib,
// build:ui, build:example, in that order) only when the step has to, so a second start with nothing
// changed goes straight to the app. A step has to run when one of its outputs is missing, or when its
// inputs (source folders, configs, package.json, the lockfile) differ from the snapshot taken before
// its last successful build here: each file's path, size and modification time, so an edit, a touch,
// a new file and a deleted file all count. Snapshots are kept in dist/.build-state/<step>.json.
// Each step is decided just before it runs: build:lib empties libs/durable/dist, which removes the
// UI copied into it, so a library rebuild makes the UI step's output missing and that step runs too.
// `npm run build` still builds everything, unconditionally.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const shared = ['tsconfig.json', 'package.json', 'package-lock.json'];

/** The steps, in build order; paths are relative to the repository's root. */
export const STEPS = [
  {
    name: 'library',
    script: 'build:lib',
    inputs: ['libs/durable/src', 'libs/durable/tsconfig.lib.json', 'libs/durable/package.json', ...shared],
    outputs: ['libs/durable/dist/index.js'],
  },
  {
    name: 'dashboard UI',
    script: 'build:ui',
    inputs: ['apps/dashboard', ...shared],
    outputs: ['dist/dashboard-ui/index.html', 'libs/durable/dist/dashboard-ui/index.html'],
  },
  {
    name: 'example',
    script: 'build:example',
    // The example compiles against the library's typings, which every library build rewrites: its
    // index.d.ts stands for them, so each library build (here or by hand) rebuilds the example too.
    inputs: ['apps/example', 'libs/durable/dist/index.d.ts', 'libs/durable/package.json', ...shared],
    outputs: ['dist/apps/example/main.js'],
  },
];

const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.git']);

/** Every file under the step's inputs, as `path -> "size:mtime"` (absent inputs are simply not listed). */
export function snapshot(step, root) {
  const files = {};
  const visit = (path) => {
    let stats;
    try {
      stats = statSync(path);
    } catch {
      return; // an input that does not exist (yet): a file appearing there later shows up as added
    }
    if (stats.isDirectory()) {
      for (const entry of readdirSync(path)) if (!SKIPPED_FOLDERS.has(entry)) visit(join(path, entry));
    } else {
      files[relative(root, path)] = `${stats.size}:${stats.mtimeMs}`;
    }
  };
  for (const input of step.inputs) visit(resolve(root, input));
  return files;
}

const statePath = (step, root) => join(root, 'dist/.build-state', `${step.script.replace(/[^\w.-]/g, '-')}.json`);

/**
 * Why `step` must be built, or null when it is up to date: its outputs exist and its inputs match the
 * snapshot recorded by its last successful build. `current` is the inputs' snapshot as of now.
 */
export function buildReason(step, root, current = snapshot(step, root)) {
  const missing = step.outputs.find((output) => !existsSync(resolve(root, output)));
  if (missing) return `${missing} is missing`;
  let previous;
  try {
    previous = JSON.parse(readFileSync(statePath(step, root), 'utf8')).inputs;
  } catch {
    return 'no record of an earlier build';
  }
  const changes = [];
  for (const [file, stamp] of Object.entries(current)) {
    if (!(file in previous)) changes.push(`${file} added`);
    else if (previous[file] !== stamp) changes.push(`${file} changed`);
  }
  for (const file of Object.keys(previous)) if (!(file in current)) changes.push(`${file} removed`);
  if (changes.length === 0) return null;
  return changes.length > 3 ? `${changes.slice(0, 3).join(', ')} and ${changes.length - 3} more` : changes.join(', ');
}

/** Records `inputs` (the snapshot taken before the build started) as what `step` was last built from. */
export function recordBuild(step, root, inputs) {
  const path = statePath(step, root);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify({ builtAt: new Date().toISOString(), inputs }));
}

function main() {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const upToDate = [];
  for (const step of STEPS) {
    // Taken before the build: a file edited while it runs differs from the record, so the next start rebuilds.
    const inputs = snapshot(step, root);
    const reason = buildReason(step, root, inputs);
    if (!reason) {
      upToDate.push(step.name);
      continue;
    }
    const started = Date.now();
    console.log(`Building the ${step.name} (${reason})…`);
    const { status } = spawnSync('npm', ['run', '--silent', step.script], { cwd: root, stdio: 'inherit' });
    if (status !== 0) process.exit(status ?? 1);
    recordBuild(step, root, inputs);
    console.log(`Built the ${step.name} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  }
  if (upToDate.length) console.log(`Up to date, not rebuilt: ${upToDate.join(', ')}.`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
