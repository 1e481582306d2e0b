import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';

describe('a mistyped word is answered with what was likely meant, in berth’s words', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  after(() => world.cleanup());

  it('a command: "did you mean status?", exit 2', async () => {
    const run = await world.berth('statsu');
    assert.equal(run.code, 2);
    assert.equal(
      run.stderr,
      'berth has no command "statsu"; did you mean status? See berth help\n',
    );
    const cut = await world.berth('conv', 'box');
    assert.equal(
      cut.stderr,
      'berth has no command "conv"; did you mean converge? See berth help\n',
    );
  });

  it('a flag, of the command or global, not in the option parser’s voice', async () => {
    const run = await world.berth('status', '--jsn');
    assert.equal(run.code, 2);
    assert.equal(
      run.stderr,
      'berth status has no option --jsn; did you mean --json? See berth help status\n',
    );
    const own = await world.berth('converge', 'box', '--fliter', 'gitea');
    assert.equal(
      own.stderr,
      'berth converge has no option --fliter; did you mean --filter? See berth help converge\n',
    );
    const bare = await world.berth('--jsn');
    assert.equal(bare.code, 2);
    assert.equal(bare.stderr, 'berth has no option --jsn; did you mean --json? See berth help\n');
  });

  it('a word too many, said with what the command takes', async () => {
    const run = await world.berth('validate', 'extra');
    assert.equal(run.code, 2);
    assert.equal(run.stderr, 'berth validate takes no word; "extra" is one word too many\n');
    const status = await world.berth('status', 'box', 'extra');
    assert.equal(status.stderr, 'berth status takes [node]; "extra" is one word too many\n');
  });

  it('a node: the command refuses, naming the node it likely meant', async () => {
    const run = await world.berth('adopt', 'bxo');
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'berth does not know node bxo; did you mean box? Else add it under nodes in berth.json\n',
    );
    const far = await world.berth('adopt', 'web9');
    assert.equal(far.stderr, 'berth does not know node web9; add it under nodes in berth.json\n');
  });

  it('a module: assign keeps "gite" (an assignment that does not resolve is kept), and says gitea was likely meant', async () => {
    const run = await world.berth('assign', 'box', 'gite');
    assert.equal(run.code, 1);
    assert.equal(run.stdout, 'box is to run gite\n');
    assert.match(
      run.stderr,
      /^gite does not resolve: it is not in the catalog \(no file [^)]+\); did you mean gitea\?\n$/,
    );
    const state = await world.readState();
    assert.deepEqual(state.assignments?.box, ['gite']);

    const unassign = await world.berth('unassign', 'box', 'git');
    assert.equal(
      unassign.stderr,
      'box is not to run git; there is nothing to unassign; did you mean gite?\n',
    );
    const take = await world.berth('take', 'box', 'postgress');
    assert.equal(take.code, 1);
    assert.match(take.stderr, /did you mean postgres\?\n$/);
  });
});
