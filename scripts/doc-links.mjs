#!/usr/bin/env node
// Keeps the docs' links to the tests that prove each rule pointing at the right line: a link
// `[label](…/test/x.e2e-spec.ts#L12 "words")` is re-anchored to the one `it(` whose title holds the
// words. `--check` exits 1 when an anchor moved or the words match no test or several (a test runs that).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LINK = /\]\(((?:\.\.\/)+)(test\/[^#)\s]+)#L(\d+) "([^"]+)"\)/g;

function docs(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? docs(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
  );
}

const problems = [];
for (const doc of [join(root, 'README.md'), ...docs(join(root, 'docs'))]) {
  const before = readFileSync(doc, 'utf8');
  const after = before.replace(LINK, (all, up, path, _line, words) => {
    const lines = readFileSync(join(root, path), 'utf8').split('\n');
    // A title Prettier put on the line after `it(` (the call's arguments did not fit on one) reads from there.
    const title = (i) => (/^\s*it\(\s*$/.test(lines[i]) ? lines[i] + lines[i + 1] : lines[i]);
    const hits = lines.flatMap((line, i) => (/^\s*it\(/.test(line) && title(i).replace(/\\'/g, "'").includes(words) ? [i + 1] : []));
    if (hits.length !== 1) {
      problems.push(`${relative(root, doc)}: "${words}" matches ${hits.length} tests in ${path}`);
      return all;
    }
    return `](${up}${path}#L${hits[0]} "${words}")`;
  });
  if (after === before) continue;
  if (process.argv.includes('--check')) problems.push(`${relative(root, doc)}: anchors moved; run \`node scripts/doc-links.mjs\``);
  else writeFileSync(doc, after);
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
