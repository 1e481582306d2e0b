/**
 * `--detailed-exitcode` on a preview means the same for a target as for one node, through
 * the real binary: 0 nothing to do, 2 something to do and nothing blocks it, 1 a blocker.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeWorld, type World } from './helpers/world.ts';

const NODES = ['n04', 'web1', 'web2', 'web3'];

describe('--detailed-exitcode on a target', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({
      nginx: {
        description: 'nginx',
        files: { '/etc/nginx/nginx.conf': { content: 'worker_processes 2;\n' } },
      },
      needy: { description: 'needs what is not there', needs: ['ghost'] },
    });
    for (const node of NODES) await mkdir(join(world.dir, node), { recursive: true });
    await world.writeSettings({
      nodes: Object.fromEntries(NODES.map((node) => [node, { root: join(world.dir, node) }])),
      groups: { web: ['web1', 'web2', 'web3'] },
    });
  });
  after(() => world.cleanup());

  const exit = async (...args: string[]) => {
    const run = await world.berth(...args, '--detailed-exitcode');
    return run.code;
  };

  test('nothing to do on any node exits 0', async () => {
    assert.equal(await exit('converge', '@web'), 0);
    assert.equal(await exit('converge', '@web,n04'), 0);
  });

  test('three nodes to install exit 2, a group and a list alike', async () => {
    assert.equal((await world.berth('assign', '@web', 'nginx')).code, 0);
    assert.equal(await exit('converge', 'web1'), 2);
    assert.equal(await exit('converge', '@web'), 2);
    assert.equal(await exit('converge', '@web,n04'), 2);
    // Without the flag a preview exits 0, as before.
    assert.equal((await world.berth('converge', '@web')).code, 0);
  });

  test('one node of the group blocked exits 1, --json too', async () => {
    assert.equal((await world.berth('assign', 'web3', 'needy')).code, 1);
    assert.equal(await exit('converge', '@web'), 1);
    assert.equal(await exit('converge', 'web3'), 1);
    assert.equal(await exit('converge', 'web1,web2'), 2);
    const json = await world.berth('converge', '@web', '--json', '--detailed-exitcode');
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stdout).nodes.web3.blockers.length, 1);
  });
});
