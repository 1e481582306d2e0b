/**
 * What a start loads, as a user could see it without a clock (how long it takes is
 * `npm run bench -- cli`, docs/performance.md): `berth status` and `--version` load
 * neither the HTTP stack, which only `berth api` serves on, nor pg, which only a
 * PostgreSQL store uses, nor node:crypto. A preload records, as the process ends, Node's
 * own modules loaded: node:http for the one, node:dns (pg resolves a store's host) for the
 * other.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, runBerth, type World } from './helpers/world.ts';

/** Writes, at exit, Node's public modules loaded after the preload's own. */
const PRELOAD = `
const { writeFileSync } = require('node:fs');
const loadedBefore = new Set(process.moduleLoadList);
process.on('exit', () => {
  const loaded = process.moduleLoadList
    .filter((name) => !loadedBefore.has(name) && name.startsWith('NativeModule '))
    .map((name) => name.slice('NativeModule '.length));
  writeFileSync(process.env.BERTH_TEST_LOADED, JSON.stringify(loaded));
});
`;

/**
 * Node's modules a start must not load: the HTTP stack's, pg's, and node:crypto, which only
 * what seals, mints or verifies needs (Web Crypto's global makes the state's random names).
 */
const NOT_AT_START = ['http', 'dns', 'crypto'];

describe('what a start loads', () => {
  let world: World;
  let preload: string;
  async function loadedBy(args: string[], env: Record<string, string> = {}) {
    const report = join(world.dir, 'loaded.json');
    const done = await runBerth(['--state', world.state, ...args], {
      ...env,
      NODE_OPTIONS: `--require ${preload}`,
      BERTH_TEST_LOADED: report,
    });
    return { ...done, loaded: JSON.parse(await readFile(report, 'utf8')) as string[] };
  }

  before(async () => {
    world = await makeWorld({
      conf: { files: { '/etc/conf/app.conf': { content: 'port 2\n' } } },
    });
    preload = join(world.dir, 'preload.cjs');
    await writeFile(preload, PRELOAD);
    await world.onBox('/etc/conf/app.conf', 'port 1\n');
    assert.equal((await world.berth('assign', 'box', 'conf')).code, 0);
    assert.equal((await world.berth('adopt', 'box')).code, 0);
  });
  after(() => world.cleanup());

  for (const args of [['status'], ['--version']])
    it(`berth ${args.join(' ')} loads neither the HTTP stack, pg nor node:crypto`, async () => {
      const { code, stderr, loaded } = await loadedBy(args);
      assert.equal(code, 0, stderr);
      for (const name of NOT_AT_START)
        assert.ok(!loaded.includes(name), `berth ${args[0]} loads node:${name}: ${loaded}`);
    });

  it('the record sees pg where it is loaded: a status of a PostgreSQL store', async () => {
    // A control, so that the checks above can fail: no server listens on port 1.
    const { code, stderr, loaded } = await loadedBy(['status'], {
      BERTH_STORE: 'postgres://berth@127.0.0.1:1/berth',
    });
    assert.equal(code, 3, stderr);
    assert.match(stderr, /PostgreSQL at 127\.0\.0\.1:1 refused the connection/);
    assert.ok(loaded.includes('dns'), `pg loads no node:dns: ${loaded}`);
  });
});
