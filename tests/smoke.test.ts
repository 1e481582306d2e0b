import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { digestOf, GITEA, makeWorld, POSTGRES, type World } from './helpers/world.ts';

describe('a first take and converge, through the real binary', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  after(() => world.cleanup());

  it('adopts, takes a hand-installed gitea, and installs postgres', async () => {
    await world.onBox('/var/lib/gitea/repo', 'data');
    await world.onBox('/etc/gitea/db_password', 'hunter2\n');
    assert.equal((await world.berth('adopt', 'box')).code, 0);

    const preview = await world.berth('take', 'box', 'gitea');
    assert.equal(preview.code, 0);
    assert.match(preview.stdout, /secret db_password: found on box at \/etc\/gitea\/db_password/);
    const act = await world.berth(
      'take',
      'box',
      'gitea',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
      '--mint',
      'admin_token',
    );
    assert.equal(act.code, 0, act.stderr);
    assert.doesNotMatch(act.stdout + act.stderr, /hunter2/);

    assert.equal((await world.berth('assign', 'box', 'postgres')).code, 0);
    const plan = await world.berth('converge', 'box');
    const done = await world.berth('converge', 'box', '--yes', '--digest', digestOf(plan.stdout));
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /ran start of postgres/);
  });
});
