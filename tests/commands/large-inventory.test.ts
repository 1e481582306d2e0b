import assert from 'node:assert/strict';
import { readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileConfig } from '../../src/config/file-config.ts';
import { SETTLED_MS } from '../../src/config/inventory-index.ts';
import { makeWorld, POSTGRES, type World } from '../helpers/world.ts';

/**
 * A berth.json of 8,000 nodes (past the size from which berth indexes it): a command on
 * one node reads that node's entry from the index, and every edit of berth.json is seen
 * at once, whatever the index holds.
 */
describe('a large inventory', () => {
  let world: World;
  const NODES = 8_000;
  const cache = () => join(world.state, 'cache', 'inventory');
  /**
   * An act on `nodes` reading berth.json `msAfter` its last change, by berth's own config
   * reader given that clock: past SETTLED_MS it is indexed, as a berth run then would.
   */
  const readAfter = async (msAfter: number, nodes = ['box']) => {
    const info = await stat(join(world.state, 'berth.json'), { bigint: true });
    const changedAt = Number(info.ctimeMs > info.mtimeMs ? info.ctimeMs : info.mtimeMs);
    await fileConfig(world.state, () => changedAt + msAfter)(nodes);
  };
  const indexes = async () => readdir(cache()).catch(() => [] as string[]);
  const inventory = (box: unknown, extra: Record<string, unknown> = {}) => {
    const nodes: Record<string, unknown> = { box };
    for (let i = 0; i < NODES; i++) nodes[`n${i}`] = { ssh: `admin@n${i}.lan`, port: 2200 };
    return { nodes: { ...nodes, ...extra } };
  };

  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    await world.writeSettings(inventory({ root: world.root }));
    assert.ok((await stat(join(world.state, 'berth.json'))).size > 256 * 1024);
  });
  after(() => world.cleanup());

  it('indexes berth.json once it has settled, and acts on one node through the index', async () => {
    // An index is made only of a berth.json that has not changed for two seconds.
    await readAfter(SETTLED_MS);
    assert.deepEqual(await indexes(), [], 'indexed before it settled');
    await readAfter(SETTLED_MS + 1);
    const first = await world.berth('assign', 'box', 'postgres');
    assert.deepEqual(first, { code: 0, stdout: 'box is to run postgres\n', stderr: '' });
    const [index, ...others] = await indexes();
    assert.equal(others.length, 0, 'one index');
    const files = await readdir(join(cache(), index as string));
    assert.ok(files.includes('head.json') && files.length > 2, files.join(' '));

    const status = await world.berth('status', 'n7321');
    assert.equal(status.code, 0, status.stderr);
    assert.equal(status.stdout.split('\n')[0], 'n7321 (ssh admin@n7321.lan)');
    assert.match(
      (await world.berth('status', 'box', '--json')).stdout,
      new RegExp(`"machine":\\{"root":"${world.root}"\\}`),
    );
    const unknown = await world.berth('assign', 'n8000', 'postgres');
    assert.equal(unknown.code, 1);
    assert.equal(
      unknown.stderr,
      'berth does not know node n8000; add it under nodes in berth.json\n',
    );
  });

  it('sees an edit of the same size at once', async () => {
    await world.berth('status', 'box');
    const path = join(world.state, 'berth.json');
    const before = await readFile(path, 'utf8');
    const after = before.replace('"admin@n42.lan"', '"admin@m42.lan"');
    assert.equal(after.length, before.length);
    await writeFile(path, after);
    const status = await world.berth('status', 'n42');
    assert.equal(status.stdout.split('\n')[0], 'n42 (ssh admin@m42.lan)');
  });

  it('refuses a node taken out of berth.json, and a berth.json no longer valid', async () => {
    await readAfter(SETTLED_MS + 1);
    assert.equal((await world.berth('status', 'n43')).code, 0);
    const path = join(world.state, 'berth.json');
    const settings = JSON.parse(await readFile(path, 'utf8'));
    delete settings.nodes.n43;
    await writeFile(path, JSON.stringify(settings));
    const gone = await world.berth('assign', 'n43', 'postgres');
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^berth does not know node n43;/);

    settings.nodes.n44 = { ssh: 'admin@n44.lan', prot: 22 };
    await writeFile(path, JSON.stringify(settings));
    const invalid = await world.berth('assign', 'box', 'postgres');
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /unknown field nodes\.n44\.prot; did you mean port\?/);
  });

  it('reads berth.json whole when its index is damaged', async () => {
    await world.writeSettings(inventory({ root: world.root }, { spare: { root: '/srv/spare' } }));
    await readAfter(SETTLED_MS + 1);
    assert.equal((await world.berth('status', 'spare')).code, 0);
    const [index] = await readdir(cache());
    const here = join(cache(), index as string);
    for (const file of await readdir(here)) await truncate(join(here, file), 3);
    const status = await world.berth('status', 'spare');
    assert.equal(status.code, 0, status.stderr);
    assert.equal(status.stdout.split('\n')[0], 'spare (root /srv/spare)');
    await readAfter(SETTLED_MS + 1, ['spare']);
    const head = JSON.parse(await readFile(join(here, 'head.json'), 'utf8'));
    assert.equal(head.stamp, index, 'made anew');

    const [bucket] = (await readdir(here)).filter((file) => file.startsWith('b'));
    await rm(join(here, bucket as string));
    assert.equal(
      (await world.berth('status', 'spare')).stdout.split('\n')[0],
      'spare (root /srv/spare)',
    );
    await readAfter(SETTLED_MS + 1, ['spare']);
    assert.ok((await readdir(here)).includes(bucket as string), 'a lost bucket is made anew');
  });

  it('does without an index it cannot write', async () => {
    await rm(join(world.state, 'cache'), { recursive: true, force: true });
    await writeFile(join(world.state, 'cache'), 'not a directory');
    const assign = await world.berth('assign', 'spare', 'postgres');
    assert.deepEqual(assign, { code: 0, stdout: 'spare is to run postgres\n', stderr: '' });
    assert.equal(await readFile(join(world.state, 'cache'), 'utf8'), 'not a directory');
  });
});
