/**
 * The codes of the gate between a preview and its act — no digest, one that is not a
 * digest, a stale one, a blocker standing — and a target whose nodes refused for different
 * reasons, on both faces, for one node and for a group.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { codesSeen, type Faces, openFaces } from './faces.ts';

const codes = codesSeen('gate');
const NODES = ['web1', 'web2', 'web3'];

describe('the gate between a preview and its act', () => {
  let faces: Faces;
  before(async () => {
    faces = await openFaces({
      modules: {
        nginx: {
          description: 'nginx',
          files: { '/etc/nginx/nginx.conf': { content: 'worker_processes 2;\n' } },
        },
        needy: { description: 'needs what is not there', needs: ['ghost'] },
        failing: { description: 'a start that fails', start: 'exit 3' },
      },
      nodes: NODES,
      settings: { groups: { web: NODES, front: ['web1', 'web2'] } },
    });
  });
  after(() => faces?.close());

  /** The preview's digest on the command line. */
  const digestOf = async (node: string) =>
    (await faces.line('converge', { node })).body.digest as string;

  it('digest_needed and invalid_digest, for a node and for a group', async () => {
    assert.equal((await faces.world.berth('assign', '@web', 'nginx')).code, 0);
    for (const [scope, node] of [
      ['node', 'web1'],
      ['group', '@web'],
    ] as const) {
      for (const [digest, code] of [
        [undefined, 'digest_needed'],
        ['xyz', 'invalid_digest'],
      ] as const) {
        const asked = { node, yes: true, ...(digest === undefined ? {} : { digest }) };
        await codes.refusedOnBoth(faces, scope, 'converge', asked, { exit: 1, status: 409, code });
      }
    }
  });

  it('digest_stale: a node changed by hand since the preview; nothing done on any node', async () => {
    const one = await digestOf('web1');
    const group = await digestOf('@web');
    await mkdir(join(faces.rootOf('web1'), 'etc/nginx'), { recursive: true });
    await writeFile(join(faces.rootOf('web1'), 'etc/nginx/nginx.conf'), 'by hand\n');
    for (const [face, ask] of [
      ['cli', faces.line],
      ['api', faces.served],
    ] as const) {
      codes.refused(
        `${face} node`,
        await ask('converge', { node: 'web1', yes: true, digest: one }),
        'digest_stale',
        ['web1'],
      );
      const stale = await ask('converge', { node: '@web', yes: true, digest: group });
      codes.refused(`${face} group`, stale, 'digest_stale', NODES);
      assert.match(stale.body.refused ?? '', /nothing was done on any node/);
    }
    await faces.world.berth('unassign', '@web', 'nginx');
  });

  it('blocked: an act while a blocker stands, each blocker coded; a group with one node blocked', async () => {
    assert.equal((await faces.world.berth('assign', 'web3', 'needy')).code, 1);
    for (const face of ['cli', 'api'] as const) {
      const ask = face === 'cli' ? faces.line : faces.served;
      const one = await ask('converge', {
        node: 'web3',
        yes: true,
        digest: await digestOf('web3'),
      });
      codes.refused(`${face} node`, one, 'blocked', ['web3']);
      assert.equal(one.body.nodes?.web3?.blockers[0]?.code, 'does_not_resolve');

      const group = await ask('converge', {
        node: '@web',
        yes: true,
        digest: await digestOf('@web'),
      });
      codes.refused(`${face} group`, group, 'blocked', ['web3']);
      assert.equal(group.body.nodes?.web1?.code, undefined, 'a node done has no code');
    }
    await faces.world.berth('unassign', 'web3', 'needy');
  });

  it('nodes_refused: the nodes of a target refused or failed for different reasons', async () => {
    await faces.world.berth('assign', 'web1', 'failing');
    await faces.world.berth('assign', 'web2', 'needy');
    for (const face of ['cli', 'api'] as const) {
      const ask = face === 'cli' ? faces.line : faces.served;
      const mixed = await ask('converge', {
        node: '@front',
        yes: true,
        digest: await digestOf('@front'),
      });
      assert.equal(mixed.status, face === 'cli' ? 1 : 409);
      codes.refused(`${face} group`, mixed, 'nodes_refused');
      assert.equal(mixed.body.nodes?.web1?.code, 'hook_failed');
      assert.equal(mixed.body.nodes?.web2?.code, 'blocked');
    }
  });
});

codes.finally();
