import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import { snapshot } from './support.ts';

describe('berth assign', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  afterEach(() => world.cleanup());

  it('keeps the assignment and says so', async () => {
    const run = await world.berth('assign', 'box', 'postgres');
    assert.deepEqual(run, { code: 0, stdout: 'box is to run postgres\n', stderr: '' });
    assert.deepEqual((await world.readState()).assignments, { box: ['postgres'] });
  });

  it('says an assignment it already keeps is kept, and changes nothing', async () => {
    await world.berth('assign', 'box', 'postgres');
    const before = await readFile(join(world.state, 'nodes', 'box', 'record.json'), 'utf8');
    const run = await world.berth('assign', 'box', 'postgres');
    assert.deepEqual(run, {
      code: 0,
      stdout: 'box is already to run postgres; nothing changed\n',
      stderr: '',
    });
    assert.equal(await readFile(join(world.state, 'nodes', 'box', 'record.json'), 'utf8'), before);
  });

  it('keeps a module whose need the node is not assigned, says both, and exits 1', async () => {
    const run = await world.berth('assign', 'box', 'gitea');
    assert.deepEqual(run, {
      code: 1,
      stdout: 'box is to run gitea\n',
      stderr: 'gitea does not resolve: it needs postgres, which box is not assigned\n',
    });
    assert.deepEqual((await world.readState()).assignments, { box: ['gitea'] });

    const then = await world.berth('assign', 'box', 'postgres');
    assert.equal(then.code, 0, then.stderr);
    assert.deepEqual((await world.readState()).assignments, { box: ['gitea', 'postgres'] });
  });

  it('says a need that is not in the catalog is not in the catalog, not that it is unassigned', async () => {
    await world.writeModule('cache-user', { needs: ['memcached'] });
    const run = await world.berth('assign', 'box', 'cache-user');
    assert.deepEqual(run, {
      code: 1,
      stdout: 'box is to run cache-user\n',
      stderr: 'cache-user does not resolve: it needs memcached, which is not in the catalog\n',
    });
  });

  it('keeps a module that is not in the catalog, saying where it looked', async () => {
    const run = await world.berth('assign', 'box', 'redis');
    assert.equal(run.code, 1);
    assert.equal(run.stdout, 'box is to run redis\n');
    assert.equal(
      run.stderr,
      `redis does not resolve: it is not in the catalog (no file ${join(world.state, 'modules', 'redis.json')})\n`,
    );
    assert.deepEqual((await world.readState()).assignments, { box: ['redis'] });
  });

  it('keeps a module whose file is not valid, saying what is wrong with it', async () => {
    await world.writeModule('bad', { data: ['var/lib/bad'] });
    const invalid = await world.berth('assign', 'box', 'bad');
    assert.equal(invalid.code, 1);
    assert.equal(invalid.stdout, 'box is to run bad\n');
    assert.match(
      invalid.stderr,
      /^bad does not resolve: \S+bad\.json is not valid: data\.0: a machine path must be absolute/,
    );

    await writeFile(join(world.state, 'modules', 'broken.json'), '{"needs": [');
    const broken = await world.berth('assign', 'box', 'broken');
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /^broken does not resolve: \S+broken\.json is not valid JSON/);
    assert.deepEqual((await world.readState()).assignments, { box: ['bad', 'broken'] });
  });

  it('keeps a module whose needs form a cycle, naming the cycle', async () => {
    await world.writeModule('a', { needs: ['b'] });
    await world.writeModule('b', { needs: ['a'] });
    assert.equal(
      (await world.berth('assign', 'box', 'a')).stderr,
      'a does not resolve: it needs b, which box is not assigned\n',
    );
    const run = await world.berth('assign', 'box', 'b');
    assert.deepEqual(run, {
      code: 1,
      stdout: 'box is to run b\n',
      stderr: 'b does not resolve: its needs form a cycle: b → a → b\n',
    });
    assert.deepEqual((await world.readState()).assignments, { box: ['a', 'b'] });
  });

  it('touches no machine', async () => {
    await world.onBox('/var/lib/postgresql/base', 'rows');
    const before = await snapshot(world.root);
    await world.berth('assign', 'box', 'postgres');
    assert.deepEqual(await snapshot(world.root), before);
  });
});
