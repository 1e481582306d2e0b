/**
 * JavaScript's own property names (`constructor`, `prototype`, …) are names like any
 * other wherever berth reads a record: berth.json's nodes, groups and run, a definition's
 * secrets and files, a node's record. And no chain a user writes, of groups or of needs,
 * is too deep for berth to answer in words.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';
import { convergeBox, previewDigest } from './support.ts';

describe('a secret named constructor', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  it('is a secret like any other: minted, kept and placed, never a value of JavaScript', async () => {
    await world.writeModule('app', {
      secrets: { constructor: { path: '/etc/app/constructor', bytes: 16 } },
      files: { '/etc/app/app.conf': { content: 'password={{secret constructor}}\n' } },
    });
    const valid = await world.berth('validate');
    assert.equal(valid.code, 0, valid.stderr);
    assert.equal((await world.berth('assign', 'box', 'app')).code, 0);
    const preview = await world.berth('converge', 'box');
    assert.match(
      preview.stdout,
      /mint constructor into the vault and write it to \/etc\/app\/constructor/,
    );
    const done = await convergeBox(world);
    assert.equal(done.code, 0, done.stderr);
    const minted = (await readFile(join(world.root, 'etc/app/constructor'), 'utf8')).trim();
    const placed = await readFile(join(world.root, 'etc/app/app.conf'), 'utf8');
    assert.doesNotMatch(placed, /function|native code/);
    assert.equal(placed, `password=${minted}\n`);
    assert.ok(minted.length >= 16);
  });

  it('that a module does not declare is refused by validate and converge, in words', async () => {
    await world.writeModule('app', {
      files: { '/etc/app/app.conf': { content: 'password={{secret constructor}}\n' } },
    });
    const words =
      '/etc/app/app.conf names a secret, {{secret constructor}}, that the module does not declare';
    const valid = await world.berth('validate');
    assert.equal(valid.code, 1);
    assert.ok(valid.stdout.includes(words) || valid.stderr.includes(words), valid.stdout);
    const preview = await world.berth('converge', 'box');
    assert.ok(preview.stdout.includes(`blocked: app does not resolve: `), preview.stdout);
    assert.ok(preview.stdout.includes(words), preview.stdout);
    const act = await convergeBox(world);
    assert.equal(act.code, 1);
    assert.ok(act.stderr.includes(words), act.stderr);
    const placed = await readFile(join(world.root, 'etc/app/app.conf'), 'utf8');
    assert.doesNotMatch(placed, /function|native code/);
  });
});

describe('nodes, groups and modules named as JavaScript names its own properties', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ constructor: { start: 'true' }, prototype: { start: 'true' } });
    await world.writeSettings({
      nodes: {
        box: { root: world.root },
        prototype: { root: world.root },
        constructor: { root: world.root },
      },
      groups: { constructor: ['prototype', '@prototype'], prototype: ['box'] },
      run: { '@constructor': ['prototype'] },
    });
  });
  after(() => world.cleanup());

  it('berth nodes lists them, with their groups', async () => {
    const run = await world.berth('nodes', '--json');
    assert.equal(run.code, 0, run.stderr);
    const shown = JSON.parse(run.stdout).nodes as { node: string; groups: string[] }[];
    assert.deepEqual(
      shown.map(({ node, groups }) => [node, groups]),
      [
        ['box', ['constructor', 'prototype']],
        ['constructor', []],
        ['prototype', ['constructor']],
      ],
    );
  });

  it('berth status knows each of them, and the groups and run that name them', async () => {
    const run = await world.berth('status', 'prototype');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^prototype \(root /);
    assert.match(run.stdout, /to run: prototype \(berth\.json run\.@constructor\)/);
    const group = await world.berth('status', '@constructor');
    assert.equal(group.code, 0, group.stderr);
    assert.match(group.stdout, /^box \(root /m);
    assert.match(group.stdout, /^prototype \(root /m);
    const valid = await world.berth('validate');
    assert.equal(valid.code, 0, valid.stdout + valid.stderr);
  });

  it('a module named constructor is managed, and its record read back as such', async () => {
    assert.equal((await world.berth('assign', 'constructor', 'constructor')).code, 0);
    const digest = await previewDigest(world, 'converge', 'constructor');
    const done = await world.berth('converge', 'constructor', '--yes', '--digest', digest);
    assert.equal(done.code, 0, done.stderr);
    const status = await world.berth('status', 'constructor', '--json');
    const [node] = JSON.parse(status.stdout).nodes;
    assert.deepEqual(Object.keys(node.managed), ['constructor']);
    const again = await world.berth('converge', 'constructor');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /constructor is as assigned/);
    assert.equal((await world.berth('unassign', 'constructor', 'constructor')).code, 0);
    const forgot = await world.berth('forget', 'constructor', 'constructor');
    assert.equal(forgot.code, 0, forgot.stderr);
    assert.deepEqual(
      JSON.parse((await world.berth('status', 'constructor', '--json')).stdout).nodes[0].managed,
      {},
    );
  });
});

describe('__proto__, which the name rule refuses', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  it('is refused in words wherever it is a key, never dropped as if not written', async () => {
    await world.writeSettings(
      JSON.parse(`{"nodes": {"box": {"root": "/"}, "__proto__": {"root": "/"}}}`),
    );
    await world.writeModule('app', JSON.parse(`{"secrets": {"__proto__": {"path": "/etc/x"}}}`));
    const valid = await world.berth('validate');
    assert.equal(valid.code, 1);
    const said = valid.stdout + valid.stderr;
    assert.match(said, /berth\.json: nodes: node names are 1 to 63 characters/);
    assert.match(said, /app\.json: secrets\.__proto__: a secret name is a-z, 0-9 and _/);
    const nodes = await world.berth('nodes');
    assert.equal(nodes.code, 1);
    assert.match(nodes.stderr, /berth\.json is not valid: nodes: node names are 1 to 63/);
  });
});

describe('chains deeper than any call stack', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  /** Groups g0 … g(n-1), each naming the next; the last names box, or g0 again. */
  function chain(n: number, last: string): Record<string, string[]> {
    const groups: Record<string, string[]> = {};
    for (let i = 0; i < n; i++) groups[`g${i}`] = [i + 1 < n ? `@g${i + 1}` : last];
    return groups;
  }

  for (const n of [6_000, 100_000]) {
    it(`${n.toLocaleString('en-US')} groups, each naming the next, are a target like any other`, async () => {
      await world.writeSettings({ nodes: { box: { root: world.root } }, groups: chain(n, 'box') });
      const status = await world.berth('status', '@g0');
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /^box \(root /);
      const nodes = await world.berth('nodes', '--json');
      assert.equal(nodes.code, 0, nodes.stderr);
      assert.equal(JSON.parse(nodes.stdout).nodes[0].groups.length, n);
    });
  }

  it('a cycle of 6,000 groups is refused in words, by its ends', async () => {
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      groups: chain(6_000, '@g0'),
    });
    for (const args of [['validate'], ['status', 'box'], ['nodes']]) {
      const run = await world.berth(...args);
      assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
      assert.match(
        run.stdout + run.stderr,
        /groups\.g0 takes itself in: @g0 → @g1 → @g2 → @g3 → @g4 → … 5,991 more … → @g5996 → @g5997 → @g5998 → @g5999 → @g0/,
        args.join(' '),
      );
    }
  });

  it('a chain of 6,000 modules, each needing the next, resolves or says where it does not', async () => {
    const n = 6_000;
    for (let i = 0; i < n; i++)
      await world.writeModule(`m${i}`, { needs: i + 1 < n ? [`m${i + 1}`] : ['nowhere'] });
    const modules = Array.from({ length: n }, (_, i) => `m${i}`);
    await world.writeSettings({ nodes: { box: { root: world.root } }, run: { box: modules } });

    const valid = await world.berth('validate');
    assert.equal(valid.code, 1);
    assert.match(valid.stdout + valid.stderr, /m5999\.json: needs: nowhere is not in the catalog/);
    assert.doesNotMatch(valid.stdout + valid.stderr, /call stack/);

    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    assert.ok(
      preview.stdout.includes(
        'blocked: m0 does not resolve: it needs m1, which does not resolve: m5999 (5,998 needs down from m1) does not resolve: it needs nowhere, which is not in the catalog',
      ),
      preview.stdout.slice(0, 2000),
    );

    // The last need found, every module resolves, from the far end of the chain up.
    await world.writeModule(`m${n - 1}`, {});
    const resolved = await world.berth('converge', 'box');
    assert.equal(resolved.code, 0, resolved.stderr);
    assert.match(resolved.stdout, /^install m0:/m);
    assert.match(resolved.stdout, /^install m5999:/m);
  });
});
