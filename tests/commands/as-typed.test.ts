import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, POSTGRES, type World } from '../helpers/world.ts';

/**
 * The option parser (cac, through mri) reads a word that looks like a number as a number
 * where it can (`1e3` as 1000, `0x10` as 16, `007` as 7, a blank word as 0): a command's
 * own words before any flag, and every word after `--`, stay text; a word right after a
 * flag, and an option's value, do not. What was typed cannot be had back from the
 * number, so berth refuses such a value where a name, a digest or a path is wanted, in
 * words, exit 2, and acts on nothing; a count is a number, and is taken as one.
 */
describe('the command line: words as typed, and words read as numbers', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    const nodes: Record<string, { root: string }> = {};
    for (const name of ['box', '1e3', '0x10', '007']) {
      nodes[name] = { root: join(world.dir, `root-${name}`) };
      await mkdir(nodes[name].root, { recursive: true });
    }
    await world.writeSettings({ nodes });
  });
  after(() => world.cleanup());

  it('a node named 1e3, 0x10 or 007 is that node before the flags, or after --', async () => {
    const assigned = await world.berth('assign', '1e3', 'postgres', '--json');
    assert.equal(assigned.code, 0, assigned.stdout + assigned.stderr);
    assert.equal(JSON.parse(assigned.stdout).said, '1e3 is to run postgres');
    const shown = await world.berth('status', '0x10', '--json');
    assert.equal(shown.code, 0, shown.stdout + shown.stderr);
    assert.deepEqual(
      JSON.parse(shown.stdout).nodes.map((node: { node: string }) => node.node),
      ['0x10'],
    );
    const after = await world.berth('status', '--json', '--', '007');
    assert.equal(after.code, 0, after.stdout + after.stderr);
    assert.deepEqual(
      JSON.parse(after.stdout).nodes.map((node: { node: string }) => node.node),
      ['007'],
    );
    const state = await world.readState();
    assert.deepEqual(Object.keys(state.assignments ?? {}).sort(), ['1e3']);
  });

  it('a name right after a flag, read as a number, is refused in words, and nothing is done', async () => {
    const journal = await world.journal();
    const words =
      'the option parser read a word after a flag as the number 7, as it reads 007, 1e3 or 0x10 there; give names before the options, or after --';
    const run = await world.berth('assign', '--json', '007', 'postgres');
    assert.equal(run.code, 2);
    assert.deepEqual(JSON.parse(run.stdout), {
      format_version: 1,
      refused: `berth assign: ${words}`,
      code: 'usage',
    });
    const yes = await world.berth('converge', '--yes', '007');
    assert.deepEqual([yes.code, yes.stdout, yes.stderr], [2, '', `berth converge: ${words}\n`]);
    assert.deepEqual(await world.journal(), journal);
    assert.equal((await world.readState()).assignments?.['007'], undefined);
  });

  it('a --digest or --filter read as a number is refused in words, exit 2, before any act', async () => {
    const journal = await world.journal();
    const digits = `${'0123456789'.repeat(6)}0123`;
    const run = await world.berth('converge', 'box', '--yes', '--digest', digits);
    assert.equal(run.code, 2);
    assert.match(
      run.stderr,
      /^--digest takes the digest a preview printed; the option parser read its value as the number 1\.23456789\d*e\+62, as it reads 007, 1e3, 0x10 or a blank word\n$/,
    );
    const short = await world.berth('converge', 'box', '--yes', '--digest=0012', '--json');
    assert.equal(short.code, 2);
    assert.deepEqual(JSON.parse(short.stdout), {
      format_version: 1,
      refused:
        '--digest takes the digest a preview printed; the option parser read its value as the number 12, as it reads 007, 1e3, 0x10 or a blank word',
      code: 'usage',
    });
    const filter = await world.berth('converge', 'box', '--filter', '007');
    assert.equal(filter.code, 2);
    assert.equal(
      filter.stderr,
      "--filter takes a module's name; the option parser read its value as the number 7, as it reads 007, 1e3, 0x10 or a blank word\n",
    );
    assert.deepEqual(await world.journal(), journal);
  });

  it('a count is a number: --parallel 1e3 is 1000, --parallel abc is refused in words', async () => {
    const thousand = await world.berth('converge', '@all', '--parallel', '1e3');
    assert.equal(thousand.code, 0, thousand.stderr);
    for (const count of ['abc', '0', '1.5']) {
      const run = await world.berth('converge', '@all', '--parallel', count);
      assert.equal(run.code, 2, count);
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
