// The standards-only core, held to the web's library: its files (tsconfig.core.json) are
// type-checked with no Node types, so a `node:` import or a Node global (`process`,
// `Buffer`) in any of them, or in anything they import, fails; and no type library a
// dependency drags in may bring Node's types back (a `/// <reference types="node" />` in
// a package's .d.ts would otherwise make `process` pass unseen).
//
// Also: the tests that run on both runtimes (npm test and npm run test:deno) import only
// node:test, node:assert and the core, never an edge of src/.
//
//   node scripts/check-core.mjs [--tsconfig FILE]   (FILE extends tsconfig.core.json)
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const at = process.argv.indexOf('--tsconfig');
const tsconfig = at === -1 ? join(root, 'tsconfig.core.json') : resolve(process.argv[at + 1]);

const faults = [];

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const checked = spawnSync(process.execPath, [tsc, '--noEmit', '--explainFiles', '-p', tsconfig], {
  encoding: 'utf8',
  cwd: root,
});
const lines = checked.stdout.split('\n');
for (const line of lines) if (/error TS\d+/.test(line)) faults.push(line.trim());
// tsc explains each file on the lines below its name; Node's types are a "type library"
// referenced via 'node' from the file that pulled them in. Node's own types reference
// themselves through undici's: such a file is named only when nothing else is to blame
// (a core file that imported undici-types itself).
const pulledBy = lines.flatMap((line) => {
  const pulled = /Type library referenced via 'node' from file '([^']+)'/.exec(line);
  return pulled ? [pulled[1] ?? ''] : [];
});
const own = (file) => /node_modules\/(@types\/node|undici-types)\//.test(file);
const culprits = pulledBy.some((file) => !own(file))
  ? pulledBy.filter((file) => !own(file))
  : pulledBy.filter((file) => !/node_modules\/@types\/node\//.test(file));
for (const file of culprits) faults.push(`Node's types are pulled into the core by ${file}`);
if (checked.status !== 0 && faults.length === 0)
  faults.push(`tsc failed: ${(checked.stderr || checked.stdout).trim()}`);

if (at === -1) {
  const shared = [
    ...readdirSync(join(root, 'tests/core')).map((name) => `tests/core/${name}`),
    'tests/stores/contract.ts',
    'tests/stores/memory.test.ts',
  ];
  const core = JSON.parse(readFileSync(tsconfig, 'utf8'));
  const glob = (pattern) =>
    new RegExp(`^${pattern.replaceAll('.', '\\.').replaceAll('*', '[^/]*')}$`);
  const included = core.include.map(glob);
  const excluded = core.exclude.map(glob);
  const inCore = (file) =>
    included.some((re) => re.test(file)) && !excluded.some((re) => re.test(file));
  const allowed = new Set(['node:test', 'node:assert/strict', 'valibot']);
  for (const file of shared) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const [, specifier] of text.matchAll(
      /^\s*(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gms,
    )) {
      if (specifier.startsWith('.')) {
        const target = relative(root, resolve(root, dirname(file), specifier));
        if (target.startsWith('src/') && !inCore(target))
          faults.push(`${file} imports ${target}, an edge`);
      } else if (!allowed.has(specifier)) faults.push(`${file} imports ${specifier}`);
    }
  }
}

if (faults.length > 0) {
  console.error(
    `the standards-only core is not standards-only:\n  ${[...new Set(faults)].join('\n  ')}`,
  );
  process.exit(1);
}
