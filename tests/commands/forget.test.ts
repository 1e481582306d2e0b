import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';
import { actOnPreview, snapshot, vaultValues } from './support.ts';

/** A module whose stop keeps failing: only forget lets berth let go of it. */
const STUCK = {
  data: ['/var/lib/stuck'],
  secrets: { key: { path: '/etc/stuck/key' } },
  files: { '/etc/stuck/stuck.conf': { content: 'key={{secret key}}\n' } },
  start: 'touch "$BERTH_ROOT/running"',
  stop: 'echo "stop ran" > "$BERTH_ROOT/stopped"; exit 1',
};

describe('berth forget', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ stuck: STUCK });
    assert.equal((await world.berth('assign', 'box', 'stuck')).code, 0);
    const preview = await world.berth('converge', 'box');
    const act = await actOnPreview(world, preview);
    assert.equal(act.code, 0, act.stderr);
  });
  afterEach(() => world.cleanup());

  it('stops managing a module no longer assigned without running its stop; everything stays, and it is journaled', async () => {
    assert.equal((await world.berth('unassign', 'box', 'stuck')).code, 0);
    const vault = await vaultValues(world);
    const before = await snapshot(world.root);
    const run = await world.berth('forget', 'box', 'stuck');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout,
      'berth no longer manages stuck on box; its stop was not run, and its data, files and secrets stay on box and in the vault\n',
    );
    assert.deepEqual(await snapshot(world.root), before, 'the machine is untouched');
    await assert.rejects(readFile(join(world.root, 'stopped')), 'stop never ran');
    assert.deepEqual(await vaultValues(world), vault, 'the vault keeps the secrets');
    assert.deepEqual((await world.readState()).managed, {});
    const converge = await world.berth('converge', 'box');
    assert.match(converge.stdout, /nothing to do/);
    const entry = (await world.journal()).at(-1) as Record<string, unknown>;
    assert.equal(entry.act, 'forget');
    assert.equal(entry.module, 'stuck');
    assert.equal(entry.outcome, 'done');
  });

  it('refuses a module still assigned, and one berth does not manage', async () => {
    const assigned = await world.berth('forget', 'box', 'stuck');
    assert.equal(assigned.code, 1);
    assert.match(
      assigned.stderr,
      /box is to run stuck; berth forgets only what is no longer assigned: unassign it first/,
    );
    const unmanaged = await world.berth('forget', 'box', 'other');
    assert.equal(unmanaged.code, 1);
    assert.match(
      unmanaged.stderr,
      /berth does not manage other on box; there is nothing to forget/,
    );
    assert.deepEqual(
      Object.keys(((await world.readState()).managed as Record<string, object>).box ?? {}),
      ['stuck'],
    );
  });
});
