#!/usr/bin/env node
// Keeps the docs' examples the code that tests run: a code block after `<!-- include: path -->` (or
// `<!-- include: path#region -->`, the lines between `// #region region` and `// #endregion`) is
// replaced by that file's text. `--check` exits 1 when a doc is out of date (a test runs that).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const INCLUDE = /(<!-- include: ([^#\s]+)(?:#([\w-]+))? -->\n```(\w+)\n)([\s\S]*?)(```)/g;

function docs(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? docs(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
  );
}

function excerpt(file, region) {
  const text = readFileSync(join(root, file), 'utf8');
  if (!region) return text;
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === `// #region ${region}`);
  const end = lines.findIndex((line, i) => i > start && line.trim() === '// #endregion');
  if (start < 0 || end < 0) throw new Error(`${file} has no region "${region}"`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length));
  return `${body.map((l) => l.slice(indent)).join('\n')}\n`;
}

let stale = [];
for (const doc of [join(root, 'README.md'), ...docs(join(root, 'docs'))]) {
  const before = readFileSync(doc, 'utf8');
  const after = before.replace(INCLUDE, (_all, head, file, region, _lang, _body, fence) => `${head}${excerpt(file, region)}${fence}`);
  if (after === before) continue;
  if (process.argv.includes('--check')) stale.push(relative(root, doc));
  else writeFileSync(doc, after);
}
if (stale.length) {
  console.error(`Out of date with the tested code: ${stale.join(', ')}. Run \`node scripts/doc-snippets.mjs\`.`);
  process.exit(1);
}
