// The tests that run on both runtimes (npm test and npm run test:deno) import only
// node:test, node:assert and the standards-only core: no other node: module, and no
// edge of src/ (the files tsconfig.core.json leaves out). The core itself is held to
// this by tsconfig.core.json (no @types/node) and by deno check.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const shared = [
  ...readdirSync(join(root, 'tests/core')).map((name) => `tests/core/${name}`),
  'tests/stores/contract.ts',
  'tests/stores/memory.test.ts',
];
const core = JSON.parse(readFileSync(join(root, 'tsconfig.core.json'), 'utf8'));
const glob = (pattern) =>
  new RegExp(`^${pattern.replaceAll('.', '\\.').replaceAll('*', '[^/]*')}$`);
const included = core.include.map(glob);
const excluded = core.exclude.map(glob);
const inCore = (file) =>
  included.some((re) => re.test(file)) && !excluded.some((re) => re.test(file));
const allowed = new Set(['node:test', 'node:assert/strict', 'valibot']);

const faults = [];
for (const file of shared) {
  const text = readFileSync(join(root, file), 'utf8');
  for (const [, specifier] of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gms)) {
    if (specifier.startsWith('.')) {
      const target = relative(root, resolve(root, dirname(file), specifier));
      if (target.startsWith('src/') && !inCore(target))
        faults.push(`${file} imports ${target}, an edge`);
    } else if (!allowed.has(specifier)) faults.push(`${file} imports ${specifier}`);
  }
}
if (faults.length > 0) {
  console.error(
    `the tests that run on Node and Deno import only node:test, node:assert and the core:\n  ${faults.join('\n  ')}`,
  );
  process.exit(1);
}
