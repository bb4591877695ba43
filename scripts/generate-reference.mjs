#!/usr/bin/env node
// Generates docs/reference.md from the doc comments of what libs/durable/src/index.ts exports.
// `node scripts/generate-reference.mjs` writes it; `--check` exits 1 when the file is stale (a test runs that).
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ts = require('typescript');
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'libs/durable/src/index.ts');
const target = join(root, 'docs/reference.md');

const program = ts.createProgram([entry], {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  experimentalDecorators: true,
  skipLibCheck: true,
  strict: true,
});
const checker = program.getTypeChecker();
const printer = ts.createPrinter({ removeComments: true });
const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(entry));

const SECTIONS = [
  ['Module', (d) => /Module$/.test(d.name?.text ?? '') && ts.isClassDeclaration(d)],
  ['Decorators', (d) => ts.isFunctionDeclaration(d) && /^[A-Z]/.test(d.name?.text ?? '')],
  ['Services', (d) => ts.isClassDeclaration(d) && !/Error$/.test(d.name?.text ?? '')],
  ['Functions', (d) => ts.isFunctionDeclaration(d)],
  ['Errors', (d) => ts.isClassDeclaration(d)],
  ['Constants', (d) => ts.isVariableDeclaration(d)],
  ['Types', () => true],
];

function docOf(symbol) {
  return ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
}

function print(node, file) {
  return printer.printNode(ts.EmitHint.Unspecified, node, file);
}

/** A declaration without bodies, initializers or private members: what a caller sees. */
function signature(declaration) {
  const file = declaration.getSourceFile();
  if (ts.isClassDeclaration(declaration)) {
    const members = declaration.members
      .filter(
        (m) =>
          !(ts.getCombinedModifierFlags(m) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) &&
          !(m.name && ts.isPrivateIdentifier(m.name)),
      )
      // Constructors are shown for errors only: services are injected, never constructed by callers.
      .filter(
        (m) =>
          ts.isMethodDeclaration(m) ||
          ts.isPropertyDeclaration(m) ||
          ts.isGetAccessor(m) ||
          (ts.isConstructorDeclaration(m) && isError(declaration)),
      )
      .filter((m) => !ts.isMethodDeclaration(m) || !/^on(Module|Application)|^before/.test(m.name.getText()))
      .map((m) => {
        const doc = m.name && checker.getSymbolAtLocation(m.name) ? docOf(checker.getSymbolAtLocation(m.name)) : '';
        const text = print(stripBody(m), file)
          .replace(/\s+/g, ' ')
          .replace(/\{ \}$|;$/, '')
          .replace(/^async /, '')
          .trim();
        return `${doc ? `  /** ${doc.replace(/\n/g, ' ')} */\n` : ''}  ${text};`;
      });
    const heritage = (declaration.heritageClauses ?? [])
      .filter((h) => h.token === ts.SyntaxKind.ExtendsKeyword)
      .map((h) => ` ${print(h, file)}`)
      .join('');
    return `class ${declaration.name.text}${heritage} {\n${members.join('\n')}\n}`;
  }
  if (ts.isFunctionDeclaration(declaration))
    return print(stripBody(declaration), file)
      .replace(/\s*\{\s*\}$/, ';')
      .replace(/^export (declare )?/, '');
  if (ts.isVariableDeclaration(declaration))
    return `const ${declaration.name.getText()}: ${checker.typeToString(checker.getTypeAtLocation(declaration))}`;
  // Interfaces and types as written, member doc comments included.
  return declaration.getText(file).replace(/^export /, '');
}

function isError(declaration) {
  return /Error$/.test(declaration.name?.text ?? '');
}

function stripBody(node) {
  if (ts.isMethodDeclaration(node))
    return ts.factory.updateMethodDeclaration(
      node,
      node.modifiers?.filter((m) => !ts.isDecorator(m)),
      node.asteriskToken,
      node.name,
      node.questionToken,
      node.typeParameters,
      node.parameters.map(stripParameter),
      node.type,
      undefined,
    );
  if (ts.isConstructorDeclaration(node))
    return ts.factory.updateConstructorDeclaration(node, node.modifiers, node.parameters.map(stripParameter), undefined);
  if (ts.isFunctionDeclaration(node))
    return ts.factory.updateFunctionDeclaration(
      node,
      node.modifiers,
      node.asteriskToken,
      node.name,
      node.typeParameters,
      node.parameters.map(stripParameter),
      node.type,
      undefined,
    );
  if (ts.isPropertyDeclaration(node))
    return ts.factory.updatePropertyDeclaration(
      node,
      node.modifiers?.filter((m) => !ts.isDecorator(m)),
      node.name,
      node.questionToken,
      node.type,
      undefined,
    );
  if (ts.isGetAccessor(node)) return ts.factory.updateGetAccessorDeclaration(node, node.modifiers, node.name, [], node.type, undefined);
  return node;
}

function stripParameter(parameter) {
  return ts.factory.updateParameterDeclaration(
    parameter,
    parameter.modifiers?.filter(
      (m) => !ts.isDecorator(m) && m.kind !== ts.SyntaxKind.PrivateKeyword && m.kind !== ts.SyntaxKind.ReadonlyKeyword,
    ),
    parameter.dotDotDotToken,
    parameter.name,
    parameter.questionToken ?? (parameter.initializer ? ts.factory.createToken(ts.SyntaxKind.QuestionToken) : undefined),
    parameter.type,
    undefined,
  );
}

const entries = checker
  .getExportsOfModule(moduleSymbol)
  .map((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const declarations = symbol.declarations ?? [];
    const main = declarations[0];
    return { name: exported.name, symbol, declarations, main };
  })
  .filter((e) => e.main)
  .sort((a, b) => a.name.localeCompare(b.name));

const placed = new Set();
let out =
  '# API reference\n\nGenerated by `node scripts/generate-reference.mjs` from the doc comments of what `nestjs-durable` exports; do not edit by hand.\nThe contract and its semantics are explained in [concepts](concepts.md) and [semantics](semantics.md).\n';
for (const [title, belongs] of SECTIONS) {
  const items = entries.filter((e) => !placed.has(e.name) && belongs(e.main));
  if (!items.length) continue;
  out += `\n## ${title}\n`;
  for (const item of items) {
    placed.add(item.name);
    const source = relative(root, item.main.getSourceFile().fileName);
    const doc = docOf(item.symbol);
    const bodies = item.declarations.filter((d) => !ts.isFunctionDeclaration(d) || !d.body || item.declarations.length === 1);
    const code = [...new Set(bodies.map(signature))].join('\n');
    out += `\n### \`${item.name}\`\n\n${doc ? `${doc}\n\n` : ''}\`\`\`ts\n${code}\n\`\`\`\n\n<sub>[${source}](../${source})</sub>\n`;
  }
}

if (process.argv.includes('--check')) {
  const current = readFileSync(target, 'utf8');
  if (current !== out) {
    console.error('docs/reference.md is stale: run `node scripts/generate-reference.mjs`.');
    process.exit(1);
  }
  console.log('docs/reference.md is up to date.');
} else {
  writeFileSync(target, out);
  console.log(`Wrote ${relative(root, target)} (${entries.length} exports).`);
}
