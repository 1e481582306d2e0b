/**
 * The codes of a module's packages on nodes whose root is `/` (this machine's apt, held by
 * this suite alone): a pin the lists do not offer (package_unavailable), an install apt's
 * simulation refuses (package_refused), both blockers, and an install apt refuses
 * (package_failed), on both faces, for one node and for a group.
 * Needs root, apt-get and `hello` in the lists; skipped otherwise. hello is never
 * installed: every install is refused.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { candidateOf, holdMachineApt, refuseHelloInstalls } from '../helpers/machine-apt.ts';
import { type Asked, codesSeen, type Faces, openFaces } from './faces.ts';

const codes = codesSeen('packages');

const found = candidateOf('hello');
const skip = typeof found === 'string' ? false : found.skip;

describe("a module's packages on this machine's apt", { skip }, () => {
  let faces: Faces;
  let release: (() => Promise<void>) | undefined;
  before(async () => {
    release = await holdMachineApt();
    faces = await openFaces({
      modules: {
        pinned: {
          description: 'a pin not offered',
          packages: [{ name: 'hello', version: '9.9-9' }],
        },
        greet: { description: 'hello', packages: ['hello'] },
      },
      nodes: [],
      settings: {
        nodes: { here1: { root: '/' }, here2: { root: '/' } },
        groups: { here: ['here1', 'here2'] },
      },
    });
  });
  after(async () => {
    await faces?.close();
    await release?.();
  });

  it('package_unavailable: a pinned version the lists do not offer, a blocker', async () => {
    assert.equal((await faces.world.berth('assign', '@here', 'pinned')).code, 0);
    for (const [scope, node, nodes] of [
      ['node', 'here1', ['here1']],
      ['group', '@here', ['here1', 'here2']],
    ] as const) {
      const line = await faces.line('converge', { node });
      for (const each of nodes) codes.blocker(`cli ${scope}`, line, each, 'package_unavailable');
      const served = await faces.served('converge', { node });
      for (const each of nodes) codes.blocker(`api ${scope}`, served, each, 'package_unavailable');
    }
    assert.equal((await faces.world.berth('unassign', '@here', 'pinned')).code, 0);
  });

  it("package_refused: apt's simulation would remove a package to install, and berth never removes", async () => {
    // A package of this suite's own that conflicts with hello, installed for this test only.
    const made = join(faces.world.dir, 'conflict');
    await mkdir(join(made, 'DEBIAN'), { recursive: true });
    await writeFile(
      join(made, 'DEBIAN/control'),
      'Package: berth-codes-conflict\nVersion: 1.0\nArchitecture: all\nMaintainer: berth tests <tests@berth.invalid>\nConflicts: hello\nDescription: conflicts with hello, for a test of berth\n',
    );
    execFileSync('dpkg-deb', ['--build', made, `${made}.deb`], { stdio: 'ignore' });
    execFileSync('dpkg', ['-i', `${made}.deb`], { stdio: 'ignore' });
    try {
      assert.equal((await faces.world.berth('assign', '@here', 'greet')).code, 0);
      for (const [scope, node, nodes] of [
        ['node', 'here1', ['here1']],
        ['group', '@here', ['here1', 'here2']],
      ] as const) {
        const line = await faces.line('converge', { node });
        for (const each of nodes) codes.blocker(`cli ${scope}`, line, each, 'package_refused');
        const served = await faces.served('converge', { node });
        for (const each of nodes) codes.blocker(`api ${scope}`, served, each, 'package_refused');
      }
    } finally {
      execFileSync('dpkg', ['--purge', 'berth-codes-conflict'], { stdio: 'ignore' });
      assert.equal((await faces.world.berth('unassign', '@here', 'greet')).code, 0);
    }
  });

  it('package_failed: an install apt refuses, one node at a time', async () => {
    assert.equal((await faces.world.berth('assign', '@here', 'greet')).code, 0);
    // apt here refuses any install of hello=<version> (berth's), and no other.
    const refusing = await refuseHelloInstalls(faces.world.dir);
    try {
      for (const [scope, node, nodes] of [
        ['node', 'here1', ['here1']],
        ['group', '@here', ['here1', 'here2']],
      ] as const) {
        const preview = await faces.line('converge', { node });
        const asked: Asked = { node, yes: true, digest: preview.body.digest as string };
        const line = await faces.line(
          'converge',
          { ...asked, parallel: 1 },
          '--lock-timeout',
          '5m',
        );
        codes.refused(`cli ${scope}`, line, 'package_failed', [...nodes]);
        // The failed act left greet managed (berth records that first): previewed anew.
        const again = await faces.served('converge', { node });
        const digest = again.body.digest as string;
        const served = await faces.served('converge', { ...asked, digest, parallel: 1 });
        codes.refused(`api ${scope}`, served, 'package_failed', [...nodes]);
      }
    } finally {
      await refusing.undo();
    }
  });
});

codes.finally({ skip });
