#!/usr/bin/env node
// Keeps the TypeScript in README.md and docs/ the code that compiles (a test runs `--check`).
//
// Includes: a code block after `<!-- include: path -->` (or `<!-- include: path#region -->`, the
// lines between `// #region region` and `// #endregion`) is replaced by that file's text.
//
// Types: every ```ts block type-checks against the library, all in one program with the workspace's
// compiler options (module ES2022, so that a top-level `await` stands for "in some async function").
// docs/reference.md is left out: it is the library's own declarations, printed by
// generate-reference.mjs. A block is a module of its own; HTML comments on the lines right above it
// say how else it compiles:
//   <!-- fragment: why -->  it cannot stand alone and is not compiled; the summary lists it.
//   <!-- continues -->      it is compiled in one file with the block before it in the same doc.
//   <!-- in: TEMPLATE -->   it is compiled in place of the `…` in TEMPLATE (a method in its class, a
//                           body in its function, declarations after it); its leading imports stay
//                           at the top of the file.
//   <!-- file: path -->     it is that file of the reader's project: another block imports it by a
//                           relative path.
// What a doc's blocks use without declaring it (ctx, workflows, the services behind `this`) is
// declared in test/docs/preambles/<doc>.ts; a block imports every name of it that it does not
// declare itself.
//
// `node scripts/doc-snippets.mjs` refreshes the includes, then type-checks. `--check` writes nothing
// and exits 1 when an include is stale or a block does not type-check; `--check=includes` and
// `--check=types` do one of the two.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const INCLUDE = /(<!-- include: ([^#\s]+)(?:#([\w-]+))? -->\n```(\w+)\n)([\s\S]*?)(```)/g;
const GENERATED = new Set(['docs/reference.md']);
const PREAMBLES = 'test/docs/preambles';
const MARKERS = new Set(['include', 'first-workflow', 'fragment', 'continues', 'in', 'file']);

const checkArg = process.argv.find((arg) => arg === '--check' || arg.startsWith('--check='));
const check = checkArg ? (checkArg.split('=')[1] ?? 'all') : undefined;

function docs(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? docs(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
  );
}
const DOCS = [join(root, 'README.md'), ...docs(join(root, 'docs'))];

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

/** Refreshes (or, checking, lists) the included blocks; returns the docs that were out of date. */
function includes(write) {
  const stale = [];
  for (const doc of DOCS) {
    const before = readFileSync(doc, 'utf8');
    const after = before.replace(INCLUDE, (_all, head, file, region, _lang, _body, fence) => `${head}${excerpt(file, region)}${fence}`);
    if (after === before) continue;
    stale.push(relative(root, doc));
    if (write) writeFileSync(doc, after);
  }
  return stale;
}

/** The ```ts blocks of a doc: their text without the fence's indent, first line, and markers. */
function blocksOf(doc, problems) {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ts|typescript)\s*$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const close = lines.findIndex((line, j) => j > i && /^\s*```\s*$/.test(line));
    const markers = {};
    for (let m = i - 1; m >= 0; m--) {
      const marker = /^\s*<!--\s*([\w-]+)(?::\s*(.*?))?\s*-->\s*$/.exec(lines[m]);
      if (!marker) break;
      if (!MARKERS.has(marker[1])) problems.push(`${doc}:${m + 1}: unknown marker "${marker[1]}" (known: ${[...MARKERS].join(', ')})`);
      markers[marker[1]] = { text: marker[2] ?? '', line: m + 1 };
    }
    blocks.push({ doc, line: i + 2, markers, lines: lines.slice(i + 1, close).map((line) => line.slice(indent)) });
    i = close;
  }
  return blocks;
}

/** The names a file's top-level statements declare (imports included). */
function declaredNames(ts, source) {
  const names = new Set();
  const bind = (name) => {
    if (!name) return;
    if (ts.isIdentifier(name)) names.add(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name);
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && statement.importClause) {
      const clause = statement.importClause;
      bind(clause.name);
      if (clause.namedBindings && ts.isNamespaceImport(clause.namedBindings)) bind(clause.namedBindings.name);
      else for (const element of clause.namedBindings?.elements ?? []) bind(element.name);
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) bind(declaration.name);
    } else if (statement.name && ts.isIdentifier(statement.name)) bind(statement.name);
  }
  return names;
}

/** The names a preamble exports. */
function exportedNames(ts, source) {
  const names = [];
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      names.push(...statement.exportClause.elements.map((element) => element.name.text));
    } else if (ts.getCombinedModifierFlags(statement) & ts.ModifierFlags.Export) {
      if (ts.isVariableStatement(statement)) names.push(...statement.declarationList.declarations.map((d) => d.name.text));
      else if (statement.name) names.push(statement.name.text);
    }
  }
  return names;
}

function ancestors(directory) {
  return directory === root || directory === dirname(directory) ? [] : [directory, ...ancestors(dirname(directory))];
}

/** Type-checks every block; returns the problems and a summary. */
function types() {
  const require = createRequire(import.meta.url);
  const ts = require('typescript');
  const problems = [];
  const chains = [];
  const fragments = [];
  const generated = [];
  for (const doc of DOCS.map((file) => relative(root, file))) {
    const blocks = blocksOf(doc, problems);
    if (GENERATED.has(doc)) {
      generated.push(`${doc} (${blocks.length})`);
      continue;
    }
    let previous;
    for (const block of blocks) {
      const { fragment, continues } = block.markers;
      if (fragment) {
        if (!fragment.text) problems.push(`${doc}:${fragment.line}: a fragment marker says why: <!-- fragment: why -->`);
        if (Object.keys(block.markers).some((name) => ['continues', 'in', 'file'].includes(name)))
          problems.push(`${doc}:${fragment.line}: a fragment is not compiled; it takes no other marker`);
        fragments.push(`${doc}:${block.line - 1}: ${fragment.text}`);
        previous = undefined;
      } else if (continues) {
        if (block.markers.file) problems.push(`${doc}:${block.markers.file.line}: a block that continues another is in its file`);
        if (previous) previous.push(block);
        else problems.push(`${doc}:${continues.line}: "continues" follows no compiled block`);
      } else chains.push((previous = [block]));
    }
  }

  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  const options = { ...config.options, module: ts.ModuleKind.ES2022, noEmit: true, declaration: false, sourceMap: false };
  const virtual = new Map();
  const origins = new Map();
  const preambles = new Set();
  chains.forEach((chain, n) => {
    const [first] = chain;
    const path = first.markers.file
      ? join(root, '.doc-blocks/project', first.markers.file.text)
      : join(root, '.doc-blocks', first.doc, `${n}.ts`);
    const body = []; // [text, doc line or 0]
    for (const block of chain) {
      const numbered = block.lines.map((text, i) => [text, block.line + i]);
      const template = block.markers.in;
      if (!template) {
        body.push(...numbered);
        continue;
      }
      const [before, after, ...more] = template.text.split('…');
      if (after === undefined || more.length) problems.push(`${block.doc}:${template.line}: an "in" marker puts the block at its one "…"`);
      const parsed = ts.createSourceFile('block.ts', block.lines.join('\n'), ts.ScriptTarget.ES2022, true);
      const imports = parsed.statements.filter(
        (s, i) => ts.isImportDeclaration(s) && parsed.statements.slice(0, i).every(ts.isImportDeclaration),
      );
      const split = imports.length ? parsed.getLineAndCharacterOfPosition(imports.at(-1).end).line + 1 : 0;
      body.push(...numbered.slice(0, split), [before, template.line], ...numbered.slice(split), [after ?? '', template.line]);
    }
    const text = body.map(([line]) => line).join('\n');
    const preamble = join(root, PREAMBLES, `${first.doc.replace(/^docs\//, '').replace(/\.md$/, '')}.ts`);
    let header = '';
    if (existsSync(preamble)) {
      preambles.add(preamble);
      const declared = declaredNames(ts, ts.createSourceFile(path, text, ts.ScriptTarget.ES2022));
      const names = exportedNames(ts, ts.createSourceFile(preamble, readFileSync(preamble, 'utf8'), ts.ScriptTarget.ES2022)).filter(
        (name) => !declared.has(name),
      );
      if (names.length) header = `import { ${names.join(', ')} } from '${preamble.replace(/\.ts$/, '')}';`;
    }
    virtual.set(path, `${header}\n${text}\nexport {};\n`);
    origins.set(path, { doc: first.doc, lines: [0, ...body.map(([, line]) => line)] });
  });

  for (const file of ts.sys.readDirectory(join(root, PREAMBLES), ['.ts'])) {
    const doc = relative(join(root, PREAMBLES), file).replace(/\.ts$/, '.md');
    if (!existsSync(join(root, doc)) && !existsSync(join(root, 'docs', doc)))
      problems.push(`${relative(root, file)}: no doc ${doc} to preface`);
  }

  const host = ts.createCompilerHost(options);
  const { fileExists, directoryExists, readFile, getSourceFile } = host;
  const virtualDirectories = new Set([...virtual.keys()].flatMap((file) => ancestors(dirname(file))));
  host.fileExists = (file) => virtual.has(file) || fileExists.call(host, file);
  host.directoryExists = (directory) => virtualDirectories.has(directory) || directoryExists.call(host, directory);
  host.readFile = (file) => virtual.get(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) =>
    virtual.has(file) ? ts.createSourceFile(file, virtual.get(file), language) : getSourceFile.call(host, file, language, ...rest);
  const program = ts.createProgram([...virtual.keys(), ...preambles], options, host);
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...[...virtual.keys(), ...preambles].flatMap((file) => {
      const source = program.getSourceFile(file);
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    }),
  ];
  for (const diagnostic of diagnostics) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ');
    const file = diagnostic.file?.fileName;
    if (!file) problems.push(message);
    else if (!origins.has(file)) {
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      problems.push(`${relative(root, file)}:${line + 1}: ${message}`);
    } else {
      const origin = origins.get(file);
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      const at = origin.lines[line] || origin.lines.find((l) => l) - 1;
      problems.push(`${origin.doc}:${at}: ${message}`);
    }
  }
  if (problems.length) {
    problems.push(
      `Declare what a doc's blocks share in ${PREAMBLES}/<doc>.ts, place a block with <!-- in: … -->, or mark a block that cannot stand alone <!-- fragment: why --> (see scripts/doc-snippets.mjs).`,
    );
  }
  const compiled = chains.reduce((sum, chain) => sum + chain.length, 0);
  const summary = [
    `${compiled} TypeScript blocks type-checked (in ${chains.length} files); ${fragments.length} fragments, not compiled:`,
    ...fragments.map((fragment) => `  ${fragment}`),
    `Generated, not checked here: ${generated.join(', ')}.`,
  ];
  return { problems, summary };
}

let failed = false;
if (check !== 'types') {
  const stale = includes(!check);
  if (check && stale.length) {
    console.error(`Out of date with the tested code: ${stale.join(', ')}. Run \`node scripts/doc-snippets.mjs\`.`);
    failed = true;
  }
}
if (check !== 'includes') {
  const { problems, summary } = types();
  console.log(summary.join('\n'));
  if (problems.length) {
    console.error(problems.join('\n'));
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
