import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import { previewDigest, snapshot } from './support.ts';

describe('berth unassign', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  afterEach(() => world.cleanup());

  it('refuses what is not assigned', async () => {
    const run = await world.berth('unassign', 'box', 'postgres');
    assert.deepEqual(run, {
      code: 1,
      stdout: '',
      stderr: 'box is not to run postgres; there is nothing to unassign\n',
    });
  });

  it('refuses a module another assigned module needs, naming it, and keeps both', async () => {
    await world.berth('assign', 'box', 'postgres');
    await world.berth('assign', 'box', 'gitea');
    const run = await world.berth('unassign', 'box', 'postgres');
    assert.deepEqual(run, {
      code: 1,
      stdout: '',
      stderr: 'postgres is needed by gitea, which box is to run; unassign gitea first\n',
    });
    assert.deepEqual((await world.readState()).assignments, { box: ['gitea', 'postgres'] });
  });

  it('drops the assignment and says so', async () => {
    await world.berth('assign', 'box', 'postgres');
    await world.berth('assign', 'box', 'gitea');
    const run = await world.berth('unassign', 'box', 'gitea');
    assert.deepEqual(run, { code: 0, stdout: 'box is no longer to run gitea\n', stderr: '' });
    assert.deepEqual((await world.readState()).assignments, { box: ['postgres'] });
    assert.equal((await world.berth('unassign', 'box', 'postgres')).code, 0);
    assert.deepEqual((await world.readState()).assignments, {});
  });

  it('drops an assignment that never resolved', async () => {
    await world.berth('assign', 'box', 'redis');
    const run = await world.berth('unassign', 'box', 'redis');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual((await world.readState()).assignments, {});
  });

  it('tells how to release a module berth manages, and touches no machine', async () => {
    await world.berth('assign', 'box', 'postgres');
    const digest = await previewDigest(world, 'converge', 'box');
    assert.equal((await world.berth('converge', 'box', '--yes', '--digest', digest)).code, 0);
    const before = await snapshot(world.root);

    const run = await world.berth('unassign', 'box', 'postgres');
    assert.deepEqual(run, {
      code: 0,
      stdout: 'box is no longer to run postgres; converge box to release it (its data stays)\n',
      stderr: '',
    });
    assert.deepEqual(await snapshot(world.root), before, 'the machine is as it was');
    const state = await world.readState();
    assert.deepEqual(state.assignments, {});
    assert.ok((state.managed as Record<string, Record<string, unknown>>).box?.postgres);
  });
});
