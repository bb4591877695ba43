import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The layers of docs/architecture.md, lowest first: a folder (or a file at the root of
 * libs/durable/src) imports only from its own folder and from layers below it.
 */
const LAYERS: string[][] = [
  ['errors'],
  ['wait-kinds'],
  ['interfaces'],
  ['schema'],
  ['queues'],
  ['durable.constants.ts', 'durable.messages.ts'],
  ['decorators'],
  ['persistence'],
  ['durable-options.ts'],
  ['observability'],
  ['runtime'],
  ['discovery'],
  ['worker'],
  ['client'],
  ['dashboard'],
  ['health'],
  ['durable.module.ts', 'index.ts'],
  ['testing'],
];

const src = resolve(__dirname, '../../libs/durable/src');
const rank = new Map(LAYERS.flatMap((units, i) => units.map((unit) => [unit, i] as const)));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The folder under src a file belongs to, or its own name for a file at the root. */
const unitOf = (path: string) => relative(src, path).split('/')[0];

/** Every relative import, export-from and require of the library's files, as [from unit, to unit, where]. */
function imports(): Array<[string, string, string]> {
  const edges: Array<[string, string, string]> = [];
  for (const file of sources(src)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*|^import\s+)['"](\.[^'"]*)['"]/gm)) {
      const target = resolve(dirname(file), match[1]);
      const [from, to] = [
        unitOf(file),
        unitOf(target.endsWith('.ts') ? target : statSafe(target) ? join(target, 'index.ts') : `${target}.ts`),
      ];
      if (from !== to) edges.push([from, to, `${relative(src, file)} imports ${match[1]}`]);
    }
  }
  return edges;
}

const statSafe = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

describe('the layers of libs/durable/src', () => {
  const edges = imports();

  it('every folder and root file of the library has its layer', () => {
    const units = [...new Set(sources(src).map(unitOf))];
    expect(units.filter((unit) => !rank.has(unit))).toEqual([]);
  });

  it('no import goes up a layer or sideways into another folder of the same layer', () => {
    // The files at the top (the module and the public surface) are one layer and may import each other.
    const wrong = edges.filter(
      ([from, to]) => rank.get(to)! > rank.get(from)! || (rank.get(to) === rank.get(from) && LAYERS[rank.get(from)!].length === 1),
    );
    expect(wrong.map(([, , where]) => where)).toEqual([]);
  });

  it('no folder imports, through others, a folder that imports it', () => {
    const graph = new Map<string, Set<string>>();
    for (const [from, to] of edges) graph.set(from, (graph.get(from) ?? new Set()).add(to));
    const cycles: string[] = [];
    const reaches = (start: string, goal: string, seen = new Set<string>()): boolean =>
      [...(graph.get(start) ?? [])].some((next) => next === goal || (!seen.has(next) && seen.add(next) && reaches(next, goal, seen)));
    for (const unit of graph.keys()) if (reaches(unit, unit)) cycles.push(unit);
    expect(cycles).toEqual([]);
  });

  it('the dashboard UI imports from the library only the registry of wait kinds, which imports nothing but types', () => {
    const ui = resolve(__dirname, '../../apps/dashboard/src');
    const reached = new Set<string>();
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
    for (const file of walk(ui).filter((f) => /\.tsx?$/.test(f))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/from\s+['"](\.[^'"]*)['"]/g)) {
        const target = resolve(dirname(file), match[1]);
        if (target.startsWith(src)) reached.add(relative(src, target));
      }
    }
    expect([...reached]).toEqual(['wait-kinds/wait-kind.registry']);
    const registry = readFileSync(join(src, 'wait-kinds/wait-kind.registry.ts'), 'utf8');
    expect(registry.match(/^import (?!type ).*$/gm)).toBeNull();
  });
});
