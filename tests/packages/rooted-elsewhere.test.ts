/**
 * A rooted node whose root is not `/` is a directory of this machine, with no package
 * manager of its own: a module with packages is blocked there in words, and nothing of it
 * is written (docs/decisions.md).
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

describe('a module with packages on a directory of this machine', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({
      greet: { packages: ['hello'], files: { '/etc/greet/greeting': { content: 'hi\n' } } },
    });
    await world.berth('assign', 'box', 'greet');
  });
  after(() => world.cleanup());

  it('is blocked in words, with its code, and the act is refused', async () => {
    const preview = await world.berth('converge', 'box');
    const words = `box is a directory of this machine (${world.root}), not a machine with packages of its own: berth installs no packages for greet there`;
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, new RegExp(`blocked: ${words.replace(/[()]/g, '\\$&')}\n`));
    const json = JSON.parse((await world.berth('converge', 'box', '--json')).stdout);
    assert.deepEqual(json.nodes.box.blockers, [
      { code: 'packages_not_here', kind: 'packages-not-here', module: 'greet', words },
    ]);
    const act = await world.berth('converge', 'box', '--yes', '--digest', digestOf(preview.stdout));
    assert.equal(act.code, 1);
    assert.equal(act.stderr, `the act is refused while a blocker stands: ${words}\n`);
    assert.deepEqual(await readdir(world.root), []);
  });

  it('a take says so, as what the next converge is blocked on', async () => {
    const world = await makeWorld({
      greet: { packages: ['hello'], files: { '/etc/greet/greeting': { content: 'hi\n' } } },
    });
    try {
      await mkdir(join(world.root, 'etc/greet'), { recursive: true });
      await writeFile(join(world.root, 'etc/greet/greeting'), 'hi\n');
      assert.equal((await world.berth('adopt', 'box')).code, 0);
      const preview = await world.berth('take', 'box', 'greet');
      assert.equal(preview.code, 0, preview.stderr);
      assert.match(
        preview.stdout,
        new RegExp(
          `\npackages: box is a directory of this machine \\(${world.root}\\), not a machine with packages of its own: berth installs no packages for greet there\n`,
        ),
      );
    } finally {
      await world.cleanup();
    }
  });

  it('--refresh is refused in words, and journaled as a refresh refused', async () => {
    const run = await world.berth('converge', 'box', '--refresh');
    const words = `refreshing box's package lists failed: ${world.root} is a directory of this machine: it has no package lists of its own`;
    assert.deepEqual(run, { code: 1, stdout: '', stderr: `${words}\n` });
    const refresh = (await world.journal()).filter((entry) => entry.act === 'refresh');
    assert.deepEqual(
      refresh.map(({ node, outcome, error }) => ({ node, outcome, error })),
      [{ node: 'box', outcome: 'refused', error: words }],
    );
  });
});
