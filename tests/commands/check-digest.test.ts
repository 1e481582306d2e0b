/**
 * A check whose words change on every run (a time, a process id) fails the same way in
 * the preview and in the act: the act on that preview's digest goes ahead, for take and
 * converge, on one node and on a group.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';

/** Held by hand (its data is there), and its check fails with the time in its words. */
const FLAKY = {
  data: ['/var/lib/flaky'],
  start: 'echo started >> "$BERTH_ROOT/starts"',
  check: 'date +%s%N; exit 7',
};

const NODES = ['box', 'web1', 'web2'];

/** Previews `args`, then acts on that preview's digest, as an operator does. */
async function previewThenAct(world: World, ...args: string[]) {
  const preview = await world.berth(...args);
  assert.equal(preview.code, 0, preview.stderr);
  const act = await world.actOn(preview, ...args);
  return { preview: preview.stdout, act };
}

describe('a check whose words vary from run to run', () => {
  let world: World;
  const rootOf = (node: string) => join(world.dir, node);
  beforeEach(async () => {
    world = await makeWorld({ flaky: FLAKY });
    for (const node of NODES) {
      await mkdir(join(rootOf(node), 'var/lib/flaky'), { recursive: true });
      await writeFile(join(rootOf(node), 'var/lib/flaky/db'), 'rows\n');
    }
    await world.writeSettings({
      nodes: Object.fromEntries(NODES.map((node) => [node, { root: rootOf(node) }])),
      groups: { web: ['web1', 'web2'] },
    });
  });
  afterEach(() => world.cleanup());

  for (const target of ['box', '@web']) {
    const nodes = target === 'box' ? ['box'] : ['web1', 'web2'];

    it(`take of ${target}: the act on the preview's digest goes ahead`, async () => {
      const adopted = await world.berth('adopt', target);
      assert.equal(adopted.code, 0, adopted.stderr);
      const take = await previewThenAct(world, 'take', target, 'flaky');
      assert.match(take.preview, /check: fails \(exit 7: \d+\), so flaky is taken as not started/);
      assert.equal(take.act.code, 0, take.act.stderr);
      for (const node of nodes)
        assert.deepEqual(Object.keys((await world.readState()).managed?.[node] as object), [
          'flaky',
        ]);
    });

    it(`converge of ${target}: the act on the preview's digest goes ahead`, async () => {
      await world.writeModule('flaky', { ...FLAKY, data: [] });
      assert.equal((await world.berth('assign', target, 'flaky')).code, 0);
      // The first converge installs and starts it; the next runs its check, which fails.
      const install = await previewThenAct(world, 'converge', target);
      assert.equal(install.act.code, 0, install.act.stderr);
      const again = await previewThenAct(world, 'converge', target);
      assert.match(again.preview, /start flaky: its check fails \(exit 7: \d+\); run start/);
      assert.equal(again.act.code, 0, again.act.stderr);
      for (const node of nodes)
        assert.equal(
          await readFile(join(rootOf(node), 'starts'), 'utf8'),
          'started\nstarted\n',
          `${node} was started by each converge`,
        );
    });
  }

  it('a check that now fails with another exit still refuses the act, naming it', async () => {
    await world.writeModule('flaky', {
      ...FLAKY,
      check: 'date +%s%N; test -f "$BERTH_ROOT/nine" && exit 9; exit 7',
    });
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    const preview = await world.berth('take', 'box', 'flaky');
    await writeFile(join(rootOf('box'), 'nine'), '');
    const act = await world.actOn(preview, 'take', 'box', 'flaky');
    assert.equal(act.code, 1);
    assert.match(
      act.stderr,
      /the preview changed since digest \S+: the check of flaky now fails \(exit 9\); preview again/,
    );
  });
});
