import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts/build-if-changed.mjs');

/** A step as the script describes one, over a temporary folder instead of the checkout. */
const STEP = { name: 'app', script: 'build:app', inputs: ['src', 'tsconfig.json', 'package-lock.json'], outputs: ['out/main.js'] };

/** Calls the script's exports in a child (it is an ES module; jest runs CommonJS). */
function call<T>(expression: string, root: string, step: unknown = STEP): T {
  const code = `import(${JSON.stringify(SCRIPT)}).then((m) => { const root = ${JSON.stringify(root)}, step = ${JSON.stringify(step)}; process.stdout.write(JSON.stringify(${expression}) ?? 'null'); })`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' }));
}
const reason = (root: string) => call<string | null>('m.buildReason(step, root)', root);
const recordBuild = (root: string) => call('m.recordBuild(step, root, m.snapshot(step, root))', root);

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe('npm start rebuilds a step only when its inputs changed (scripts/build-if-changed.mjs)', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'build-if-changed-'));
    write(root, 'src/main.ts', 'export const a = 1;\n');
    write(root, 'src/orders/orders.service.ts', 'export class OrdersService {}\n');
    write(root, 'tsconfig.json', '{}\n');
    write(root, 'package-lock.json', '{}\n');
    write(root, 'out/main.js', 'exports.a = 1;\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds a step it has no record of', () => {
    expect(reason(root)).toBe('no record of an earlier build');
  });

  it('finds a step up to date when nothing changed since its build', () => {
    recordBuild(root);
    expect(reason(root)).toBeNull();
  });

  it('rebuilds after a source file is touched, and names it', () => {
    recordBuild(root);
    const file = join(root, 'src/orders/orders.service.ts');
    const later = new Date(statSync(file).mtimeMs + 5_000);
    utimesSync(file, later, later);
    expect(reason(root)).toBe('src/orders/orders.service.ts changed');
  });

  it('rebuilds after a config file or the lockfile changes', () => {
    recordBuild(root);
    write(root, 'package-lock.json', '{ "lockfileVersion": 3 }\n');
    expect(reason(root)).toBe('package-lock.json changed');
  });

  it('rebuilds after a source file is added or removed', () => {
    recordBuild(root);
    write(root, 'src/new.ts', 'export {};\n');
    rmSync(join(root, 'src/main.ts'));
    expect(reason(root)).toBe('src/new.ts added, src/main.ts removed');
  });

  it('rebuilds when an output is missing, even with the inputs unchanged', () => {
    recordBuild(root);
    rmSync(join(root, 'out'), { recursive: true });
    expect(reason(root)).toBe('out/main.js is missing');
  });

  it("lists the checkout's sources, configs, lockfile and the library's typings among the example step's inputs", () => {
    const example = call<{ inputs: string[] }>('m.STEPS.find((s) => s.name === "example")', ROOT, null);
    expect(example.inputs).toEqual(
      expect.arrayContaining(['apps/example', 'libs/durable/dist/index.d.ts', 'tsconfig.json', 'package.json', 'package-lock.json']),
    );
    const files = Object.keys(call<Record<string, string>>('m.snapshot(step, root)', ROOT, example));
    expect(files).toEqual(expect.arrayContaining(['apps/example/src/main.ts', 'apps/example/tsconfig.app.json', 'package-lock.json']));
    expect(files.some((path) => path.includes('node_modules'))).toBe(false);
  });
});
