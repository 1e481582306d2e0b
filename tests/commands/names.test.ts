import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, POSTGRES, runBerth, type World } from '../helpers/world.ts';

const RULE = 'names are 1 to 63 characters of a-z, 0-9 and -, starting with a letter or digit';
const BAD = ['Web1', '-x', 'a/b', '../x', 'a'.repeat(64), 'wéb', 'a b', '.x'];

describe('the names rule, through the real binary', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
  });
  after(() => world.cleanup());

  for (const bad of BAD) {
    it(`refuses ${JSON.stringify(bad)} as a module name with exit 1 and keeps nothing`, async () => {
      // `--` so that a name starting with "-" reaches the command, not the option parser.
      const run = await world.berth('assign', 'box', '--', bad);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, `${JSON.stringify(bad)} is not a module name: ${RULE}\n`);
      await assert.rejects(access(join(world.state, 'state.json')));
    });

    it(`refuses ${JSON.stringify(bad)} as a node name with exit 1`, async () => {
      const run = await world.berth('adopt', '--', bad);
      assert.equal(run.code, 1);
      assert.equal(run.stderr, `${JSON.stringify(bad)} is not a node name: ${RULE}\n`);
    });
  }

  it('accepts a name of 63 characters, the longest the rule allows', async () => {
    const name = `a${'0'.repeat(62)}`;
    const run = await world.berth('assign', 'box', name);
    assert.equal(run.stdout, `box is to run ${name}\n`);
    assert.match(run.stderr, new RegExp(`^${name} does not resolve: it is not in the catalog`));
    assert.deepEqual((await world.readState()).assignments, { box: [name] });
    assert.equal((await world.berth('unassign', 'box', name)).code, 0);
  });

  it("keeps a name of digits as typed as a word; as an option's value it is refused in words", async () => {
    const kept = await world.berth('assign', 'box', '007');
    assert.equal(kept.stdout, 'box is to run 007\n');
    assert.deepEqual((await world.readState()).assignments, { box: ['007'] });
    assert.equal((await world.berth('unassign', 'box', '007')).code, 0);
    // The option parser reads it as the number 7: never taken for another module (docs/cli.md).
    const filter = await world.berth('converge', 'box', '--filter', '007');
    assert.deepEqual(
      [filter.code, filter.stdout, filter.stderr],
      [
        2,
        '',
        "--filter takes a module's name; the option parser read its value as the number 7, as it reads 007, 1e3, 0x10 or a blank word\n",
      ],
    );
  });

  it('checks every command and every name it is given, the filter too', async () => {
    for (const args of [
      ['unassign', 'Box', 'postgres'],
      ['take', 'box', 'Gitea'],
      ['converge', 'box', '--filter', '../x'],
      ['status', 'Box'],
    ]) {
      const run = await world.berth(...args);
      assert.equal(run.code, 1, args.join(' '));
      assert.match(run.stderr, /is not a (node|module) name: names are 1 to 63/, args.join(' '));
    }
  });

  it('refuses a node that is not in the inventory, saying where to add it', async () => {
    for (const args of [
      ['assign', 'web1', 'postgres'],
      ['unassign', 'web1', 'postgres'],
      ['adopt', 'web1'],
      ['take', 'web1', 'postgres'],
      ['converge', 'web1'],
      ['status', 'web1'],
    ]) {
      const run = await world.berth(...args);
      assert.equal(run.code, 1, args.join(' '));
      assert.equal(
        run.stderr,
        'berth does not know node web1; add it under nodes in berth.json\n',
        args.join(' '),
      );
    }
  });
});

describe('a state directory without berth.json', () => {
  let state: string;
  before(async () => {
    state = await mkdtemp(join(tmpdir(), 'berth-test-'));
    await mkdir(join(state, 'modules'));
  });
  after(() => rm(state, { recursive: true, force: true }));

  it('knows one node, local, this machine at /', async () => {
    const run = await runBerth(['--state', state, 'status']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^local \(root \/\)\n {2}to run: nothing\n/);
  });

  it('adopts local with an empty catalog, looking for nothing', async () => {
    const run = await runBerth(['--state', state, 'adopt', 'local']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^account of local, taken \S+\nthe catalog holds no modules; there was nothing to look for on local\n$/,
    );
  });

  it('knows no other node', async () => {
    const run = await runBerth(['--state', state, 'adopt', 'box']);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, 'berth does not know node box; add it under nodes in berth.json\n');
  });
});
