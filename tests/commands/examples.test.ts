import assert from 'node:assert/strict';
import { cp } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');

/** The example definitions, templates and all, are definitions berth accepts. */
describe('examples/modules', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
    await cp(EXAMPLES, join(world.state, 'modules'), { recursive: true });
  });
  after(() => world.cleanup());

  it('every example is valid, its templates found, and surveyed by adopt', async () => {
    const adopt = await world.berth('adopt', 'box');
    assert.equal(adopt.code, 0, adopt.stderr);
    for (const name of ['git-forge', 'glewlwyd', 'nginx', 'postgresql', 'redis-server'])
      assert.match(adopt.stdout, new RegExp(`\\n${name}: holds nothing\\n`), adopt.stdout);
    assert.doesNotMatch(adopt.stdout, /not surveyed/);
  });
});
