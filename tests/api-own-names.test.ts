/**
 * Over the Command API, through a real `berth api`: a node, group and module named as
 * JavaScript names its own properties are answered like any other, grants on them too.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';

describe('names like constructor over the Command API', () => {
  let served: ServedApiWorld;
  const ask = (route: string, body: Record<string, unknown>) =>
    served.ask(route, body, { as: 'deployer' });

  before(async () => {
    served = await apiWorld({
      modules: { constructor: { start: 'true' } },
      async prepare(world) {
        await mkdir(join(world.dir, 'constructor'), { recursive: true });
        await world.writeSettings({
          nodes: {
            box: { root: world.root },
            constructor: { root: join(world.dir, 'constructor') },
          },
          groups: { prototype: ['constructor'] },
          grants: [{ sub: 'deployer', may: ['assign'], on: '@prototype' }],
        });
      },
    });
  });
  after(() => served?.close());

  it('assigns module constructor to node constructor, as its grant on @prototype allows', async () => {
    const assigned = await ask('/assign', { node: 'constructor', module: 'constructor' });
    assert.equal(assigned.status, 200, assigned.text);
    assert.equal(assigned.body?.said, 'constructor is to run constructor');
    const nodes = assigned.body?.nodes as Record<string, { outcome: string }>;
    assert.deepEqual(
      Object.entries(nodes).map(([node, report]) => [node, report.outcome]),
      [['constructor', 'done']],
    );
    const group = await ask('/assign', { node: '@prototype', module: 'constructor' });
    assert.equal(group.status, 200, group.text);
  });

  it('refuses the node its grant does not name, in words', async () => {
    const refused = await ask('/assign', { node: 'box', module: 'constructor' });
    assert.equal(refused.status, 409, refused.text);
    assert.match(String(refused.body?.refused), /deployer may not assign box: no grant names it/);
  });
});
