/**
 * The standards-only core's check can fail: files planted as core files, each with one
 * way Node creeps in, make `scripts/check-core.mjs` fail and name each. The last is the
 * quiet one: a package whose types reference Node's brings `process` into scope, so only
 * the check's look at what tsc loaded can catch it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

const root = resolve(import.meta.dirname, '..');
let dir = '';

/** The check's exit and what it printed, over the core with `planted` (name → text) in it. */
async function checkPlanted(planted: Record<string, string>) {
  const plants = await mkdtemp(join(dir, 'plant-'));
  await writeFile(join(plants, 'package.json'), '{"type": "module"}\n');
  for (const [name, text] of Object.entries(planted)) await writeFile(join(plants, name), text);
  const real = JSON.parse(readFileSync(join(root, 'tsconfig.core.json'), 'utf8'));
  await writeFile(
    join(plants, 'tsconfig.json'),
    JSON.stringify({
      extends: join(root, 'tsconfig.core.json'),
      include: [...real.include.map((glob: string) => join(root, glob)), `${plants}/*.ts`],
      exclude: real.exclude.map((glob: string) => join(root, glob)),
    }),
  );
  const check = spawn(
    process.execPath,
    [join(root, 'scripts', 'check-core.mjs'), '--tsconfig', join(plants, 'tsconfig.json')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  check.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const status = await new Promise<number | null>((done) => check.on('close', done));
  return { status, stderr };
}

describe('the core check', () => {
  // Under the project's node_modules, so the planted files resolve its packages.
  before(async () => {
    const cache = join(root, 'node_modules', '.cache');
    await mkdir(cache, { recursive: true });
    dir = await mkdtemp(join(cache, 'planted-core-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('fails on a Node global and on a node: import, naming each', async () => {
    const run = await checkPlanted({
      'global.ts': `import type { Code } from '${join(root, 'src', 'model', 'codes.ts')}';\nexport const pid: Code | number = process.pid + Buffer.from('x').length;\n`,
      'events.ts': `import { setMaxListeners } from 'node:events';\nexport const set = setMaxListeners;\n`,
    });
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /^the standards-only core is not standards-only:/);
    assert.match(run.stderr, /global\.ts.*Cannot find name 'process'/);
    assert.match(run.stderr, /global\.ts.*Cannot find name 'Buffer'/);
    assert.match(run.stderr, /events\.ts.*Cannot find module 'node:events'/);
  });

  it('fails on a package whose types pull Node’s in, naming it, where process would pass', async () => {
    const run = await checkPlanted({
      'pulled.ts': `import { parse } from 'pg-connection-string';\nexport const pulled = [parse, process.pid];\n`,
    });
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /Node's types are pulled into the core by node_modules\/@types\/pg\//);
    assert.doesNotMatch(run.stderr, /undici-types/);
  });

  it('fails on a core file that imports undici’s types, which reference Node’s', async () => {
    const run = await checkPlanted({
      'undici.ts': `import type { Agent } from 'undici-types';\nexport type A = Agent;\nexport const pid = process.pid;\n`,
    });
    assert.equal(run.status, 1, run.stderr);
    assert.match(
      run.stderr,
      /Node's types are pulled into the core by node_modules\/undici-types\//,
    );
  });
});
