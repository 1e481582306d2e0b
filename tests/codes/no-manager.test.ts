/**
 * no_package_manager: a module with packages on a node whose machine has no package
 * manager berth knows. Both faces' berth run in a mount namespace of their own where
 * apt-get is a file that is not a program, so a node whose root is `/` has no apt; this
 * machine's apt is never touched. Needs root and unshare; skipped otherwise.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { needs } from '../helpers/needs.ts';
import { codesSeen, type Faces, openFaces } from './faces.ts';

const codes = codesSeen('no-manager');
const skip =
  process.getuid?.() !== 0
    ? 'needs root (a mount namespace)'
    : !existsSync('/usr/bin/apt-get')
      ? 'needs /usr/bin/apt-get to hide'
      : needs('unshare', 'util-linux');

describe('a module with packages on a machine with no package manager', { skip }, () => {
  let faces: Faces;
  const notAProgram = join(process.env.TMPDIR ?? '/tmp', `berth-no-apt-${process.pid}`);
  before(async () => {
    await writeFile(notAProgram, 'not a program\n', { mode: 0o644 });
    faces = await openFaces({
      modules: { greet: { description: 'hello', packages: ['hello'] } },
      nodes: [],
      settings: {
        nodes: { here1: { root: '/' }, here2: { root: '/' } },
        groups: { here: ['here1', 'here2'] },
      },
      // apt-get hidden from berth alone, for as long as the berth runs.
      launcher: [
        'unshare',
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount --bind "$0" /usr/bin/apt-get && exec "$@"',
        notAProgram,
      ],
    });
    await faces.world.berth('assign', '@here', 'greet');
  });
  after(async () => {
    await faces?.close();
    await rm(notAProgram, { force: true });
  });

  it('no_package_manager: a blocker naming the module, for a node and a group', async () => {
    for (const [scope, node, nodes] of [
      ['node', 'here1', ['here1']],
      ['group', '@here', ['here1', 'here2']],
    ] as const) {
      const line = await faces.line('converge', { node });
      for (const each of nodes) codes.blocker(`cli ${scope}`, line, each, 'no_package_manager');
      const served = await faces.served('converge', { node });
      for (const each of nodes) codes.blocker(`api ${scope}`, served, each, 'no_package_manager');
    }
  });
});

codes.finally({ skip });
