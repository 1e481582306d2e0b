// Counts what is long in src/: files over 300 lines and functions over 80 (a function's
// lines from its first to its last, nested ones counted on their own too). A measure for
// reviews, not a rule: `node scripts/long-code.mjs [dir]`, `--list` to name each.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const FILE_LINES = 300;
const FUNCTION_LINES = 80;
const args = process.argv.slice(2);
const list = args.includes('--list');
const root = args.find((arg) => !arg.startsWith('--')) ?? 'src';

const files = readdirSync(root, { recursive: true })
  .map(String)
  .filter((name) => name.endsWith('.ts'))
  .map((name) => join(root, name))
  .sort();

const longFiles = [];
const longFunctions = [];
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines =
    source.getLineAndCharacterOfPosition(text.length).line + (text.endsWith('\n') ? 0 : 1);
  if (lines > FILE_LINES) longFiles.push([file, lines]);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const span = last - first + 1;
      if (span > FUNCTION_LINES) longFunctions.push([`${file}:${first + 1}`, nameOf(node), span]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

function nameOf(node) {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)))
    return parent.name.getText();
  return '(anonymous)';
}

console.log(`${relative('.', root) || '.'}: ${files.length} files`);
console.log(`files over ${FILE_LINES} lines: ${longFiles.length}`);
if (list) for (const [file, lines] of longFiles) console.log(`  ${file} ${lines}`);
console.log(`functions over ${FUNCTION_LINES} lines: ${longFunctions.length}`);
if (list) for (const [at, name, span] of longFunctions) console.log(`  ${at} ${name} ${span}`);
