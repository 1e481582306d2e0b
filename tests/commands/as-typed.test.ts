import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, POSTGRES, type World } from '../helpers/world.ts';

/**
 * The option parser reads a number-like word as a number (`1e3` as 1000, `0x10` as 16,
 * `007` as 7); a name or a digest is text, and reaches the command as it was typed.
 */
describe('the command line: words reach the command as typed', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    const nodes: Record<string, { root: string }> = {};
    for (const name of ['box', '1e3', '0x10']) {
      nodes[name] = { root: join(world.dir, `root-${name}`) };
      await mkdir(nodes[name].root, { recursive: true });
    }
    await world.writeSettings({ nodes });
  });
  after(() => world.cleanup());

  it('a node named 1e3 or 0x10, even after a flag, is that node', async () => {
    const assigned = await world.berth('assign', '--json', '1e3', 'postgres');
    assert.equal(assigned.code, 0, assigned.stdout + assigned.stderr);
    assert.equal(JSON.parse(assigned.stdout).said, '1e3 is to run postgres');
    const shown = await world.berth('status', '--json', '0x10');
    assert.equal(shown.code, 0, shown.stdout + shown.stderr);
    assert.deepEqual(
      JSON.parse(shown.stdout).nodes.map((node: { node: string }) => node.node),
      ['0x10'],
    );
    const state = await world.readState();
    assert.deepEqual(Object.keys(state.assignments ?? {}).sort(), ['1e3']);
  });

  it('a --digest of digits alone is that text, not a number', async () => {
    const digits = `${'0123456789'.repeat(6)}0123`;
    const run = await world.berth('converge', 'box', '--yes', '--digest', digits);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, 'the preview changed since digest 012345678901…; preview again\n');
    const short = await world.berth('converge', 'box', '--yes', '--digest=0012', '--json');
    assert.equal(short.code, 1);
    assert.match(JSON.parse(short.stdout).refused, /^"0012" is not a digest/);
  });

  it('--parallel abc, or 1e3, is refused in words, exit 2', async () => {
    for (const count of ['abc', '1e3']) {
      const run = await world.berth('converge', '@all', '--parallel', count);
      assert.equal(run.code, 2);
      assert.equal(run.stderr, `--parallel takes a whole number from 1, not "${count}"\n`);
    }
  });

  it('-v after a command is an option it does not have, not the version', async () => {
    const run = await world.berth('converge', 'box', '-v');
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, 'berth converge has no option -v; see berth help converge\n');
    const long = await world.berth('status', '--version');
    assert.equal(long.code, 2);
    assert.match(long.stderr, /^berth status has no option --version/);
    const top = await world.berth('--version');
    assert.equal(top.code, 0);
    assert.match(top.stdout, /^berth\/\d/);
  });

  it('a secret without its words is said in berth’s words', async () => {
    const run = await world.berth('secret', 'box');
    assert.equal(run.code, 2);
    assert.equal(run.stderr, 'berth secret takes a node, a module and a secret name\n');
  });
});
