/**
 * A stale digest's refusal is journaled as a value: what changed on the node, each change
 * typed, and read back with the words the act was refused with. Through the real binary,
 * as `berth log` reads it.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

const NGINX = {
  description: 'nginx',
  files: { '/etc/nginx/nginx.conf': { content: 'worker_processes 2;\n' } },
};
const REDIS = { description: 'redis' };

/** The words a refusal was answered with on the command line: stderr without `berth: `. */
const refused = (stderr: string) => stderr.trim().replace(/^berth: /, '');

describe("a stale digest's refusal, journaled", () => {
  let world: World;
  const rootOf = (node: string) => join(world.dir, node);
  beforeEach(async () => {
    world = await makeWorld({ nginx: NGINX, redis: REDIS });
    await world.writeSettings({
      nodes: { box: { root: rootOf('box') }, pan: { root: rootOf('pan') } },
      groups: { both: ['box', 'pan'] },
    });
    assert.equal((await world.berth('assign', 'box', 'nginx')).code, 0);
  });
  afterEach(() => world.cleanup());

  /** The journal's refused converge entries, as `berth log` reads them. */
  const refusals = async () =>
    (await world.journal()).filter(
      (entry) => entry.act === 'converge' && entry.outcome === 'refused',
    );

  it('each change a value, read back in the words the act was refused with', async () => {
    const preview = await world.berth('converge', 'box');
    const digest = digestOf(preview.stdout);
    assert.equal((await world.berth('assign', 'box', 'redis')).code, 0);
    await mkdir(join(rootOf('box'), 'etc/nginx'), { recursive: true });
    await writeFile(join(rootOf('box'), 'etc/nginx/nginx.conf'), 'by hand\n');
    const act = await world.berth('converge', 'box', '--yes', '--digest', digest);
    assert.equal(act.code, 1);
    const words = refused(act.stderr);
    assert.equal(
      words,
      `the preview changed since digest ${digest.slice(0, 12)}…: box is now to run redis; file /etc/nginx/nginx.conf changed on box; preview again`,
    );
    const [entry, ...more] = await refusals();
    assert.equal(more.length, 0);
    assert.deepEqual(entry?.refusal, {
      kind: 'digest-stale',
      code: 'digest_stale',
      given: digest,
      node: 'box',
      changes: [
        { kind: 'assigned', module: 'redis' },
        { kind: 'file', path: '/etc/nginx/nginx.conf' },
      ],
    });
    assert.equal(entry?.error, words);
    const log = await world.berth('log', 'box');
    assert.equal(log.code, 0, log.stderr);
    assert.ok(log.stdout.includes(words), log.stdout);
  });

  it("a target's, refused at its gate before any node acts, journaled once with the target", async () => {
    await mkdir(rootOf('pan'), { recursive: true });
    const preview = await world.berth('converge', '@both');
    assert.equal(preview.code, 0, preview.stderr);
    const digest = digestOf(preview.stdout);
    assert.equal((await world.berth('assign', 'pan', 'redis')).code, 0);
    const act = await world.berth('converge', '@both', '--yes', '--digest', digest);
    assert.equal(act.code, 1);
    const words = refused(act.stderr);
    assert.match(words, /pan is now to run redis/);
    const [entry, ...more] = await refusals();
    assert.equal(more.length, 0, 'one entry for the target, none a node');
    assert.equal(entry?.target, '@both');
    assert.equal(entry?.code, 'digest_stale');
    assert.equal((entry?.refusal as { kind?: string } | undefined)?.kind, 'digest-stale-nodes');
    assert.equal(entry?.error, words);
    const log = await world.berth('log', '@both');
    assert.equal(log.code, 0, log.stderr);
    assert.ok(log.stdout.includes(words), log.stdout);
  });
});
