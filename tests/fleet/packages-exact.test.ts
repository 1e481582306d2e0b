/**
 * Exact bits, over ssh on fresh fleet hosts, through the real binary and `berth api`: a
 * repository the test builds (tests/fleet/apt-repository.ts) offers a version that is not
 * a version (`1.0;id>/tmp/x;:`, a hostile repository's), which berth reads as a blocker in
 * words and a code on both faces, for a node and a group, and never puts in a script; and
 * a package rebuilt at the same version with other content, its lists refreshed between
 * preview and act, which refuses the act, naming the package. Skipped, saying why, where
 * the fleet cannot run.
 */
import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Faces, openFaces } from '../codes/faces.ts';
import { digestOf, type Run, runBerth } from '../helpers/world.ts';
import { buildAptRepository, offerVersion, rebuildInRepository } from './apt-repository.ts';
import { type Fleet, fleetUnavailable, onHost } from './fleet.ts';
import { type PackageFleet, packageFleet } from './package-fleet.ts';

const HOSTILE = '1.0;id>/tmp/x;:';
/** A package built twice at one version, with other content the second time. */
const BITS = (content: string) => ({
  name: 'berth-test-bits',
  version: '1.0',
  files: { '/usr/share/berth-test-bits/content': content },
});

const unavailable = fleetUnavailable();
const repository = unavailable
  ? { skip: unavailable }
  : await buildAptRepository([], [BITS('first\n'), { name: 'berth-test-hostile', version: '1.0' }]);
const skip = typeof repository === 'string' ? false : repository.skip;

describe("exact bits: what a node's apt says is checked, and a digest covers each archive's hash", {
  skip,
  timeout: 300_000,
}, () => {
  let held: PackageFleet | undefined;
  let fleet: Fleet;
  let faces: Faces;
  let runtime: string;
  const env = () => ({ XDG_RUNTIME_DIR: runtime, SSH_AUTH_SOCK: undefined });
  const berth = (...args: string[]): Promise<Run> =>
    runBerth(['--state', faces.world.state, ...args], env());
  const on = (host: string, script: string) => onHost(fleet.host(host), script);

  before(async () => {
    held = await packageFleet({ hosts: 2, repository: repository as string });
    ({ fleet, runtime } = held);
    faces = await openFaces({
      modules: {
        hostile: { packages: ['berth-test-hostile'], start: 'touch /var/lib/berth-test/hostile' },
        bits: {
          packages: ['berth-test-bits'],
          files: { '/etc/berth-test/bits.conf': { content: 'bits\n' } },
        },
      },
      nodes: [],
      settings: {
        nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: 'bravo', sudo: true } },
        groups: { pair: ['alpha', 'bravo'] },
        sshConfig: 'ssh_config',
      },
      env: env(),
    });
    await copyFile(fleet.sshConfig, join(faces.world.state, 'ssh_config'));
  });
  after(async () => {
    await faces?.close();
    await held?.stop();
  });

  /** The hostile version on @pair: a blocker on both faces, the act refused, nothing run. */
  const hostileRefused = async () => {
    const preview = await berth('converge', 'alpha');
    assert.equal(preview.code, 0, preview.stderr);
    // The act on that preview runs nothing of the repository's, on no host, whatever it says.
    const refused = await berth('converge', 'alpha', '--yes', '--digest', digestOf(preview.stdout));
    for (const host of ['alpha', 'bravo']) {
      assert.equal((await fleet.host(host).exec('test -e /tmp/x')).code, 1, `${host}: /tmp/x`);
      assert.equal((await fleet.host(host).exec('test -e /var/lib/berth-test/hostile')).code, 1);
    }
    assert.match(
      preview.stdout,
      /\nblocked: apt on alpha gives berth-test-hostile the version "1\.0;id>\/tmp\/x;:", which is not a Debian version: berth uses none of it, and installs nothing for hostile \(look at the repositories alpha's apt reads\)\n/,
    );
    assert.doesNotMatch(preview.stdout, /install package/);
    for (const [scope, node, nodes] of [
      ['node', 'alpha', ['alpha']],
      ['group', '@pair', ['alpha', 'bravo']],
    ] as const) {
      for (const answer of [
        await faces.line('converge', { node }),
        await faces.served('converge', { node }),
      ])
        for (const each of nodes) {
          const blockers = answer.body.nodes?.[each]?.blockers ?? [];
          assert.deepEqual(
            blockers.map(({ code, kind }) => [code, kind]),
            [['package_malformed', 'package-malformed']],
            `${scope} ${each}: ${JSON.stringify(answer.body)}`,
          );
        }
    }

    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^the act is refused while a blocker stands: apt on alpha gives /);
  };

  it('a version that is not a Debian version is a blocker with a code on both faces, and never runs', async () => {
    await offerVersion(repository as string, 'berth-test-hostile', HOSTILE);
    for (const host of ['alpha', 'bravo']) await on(host, 'apt-get update -qq');
    assert.equal((await berth('assign', '@pair', 'hostile')).code, 0);
    try {
      await hostileRefused();
    } finally {
      assert.equal((await berth('unassign', '@pair', 'hostile')).code, 0);
    }
  });

  it('the same version with other bits, and lists refreshed between preview and act, refuses the act, naming the package', async () => {
    assert.equal((await berth('assign', 'alpha', 'bits')).code, 0);
    const preview = await berth('converge', 'alpha');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /^ {2}install package berth-test-bits 1\.0$/m);

    await rebuildInRepository(repository as string, BITS('second\n'));
    await on('alpha', 'apt-get update -qq');
    const refused = await berth('converge', 'alpha', '--yes', '--digest', digestOf(preview.stdout));
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(
      refused.stderr,
      /^the preview changed since digest [0-9a-f]{12}…: alpha's package lists now give berth-test-bits 1\.0 other bits \(SHA256 [0-9a-f]{16}…, not [0-9a-f]{16}…\); preview again\n$/,
    );
    assert.equal((await fleet.host('alpha').exec('test -e /usr/share/berth-test-bits')).code, 1);
    assert.equal((await fleet.host('alpha').exec('test -e /etc/berth-test/bits.conf')).code, 1);

    // Previewed anew, those bits are installed.
    const again = await berth('converge', 'alpha');
    const done = await berth('converge', 'alpha', '--yes', '--digest', digestOf(again.stdout));
    assert.equal(done.code, 0, done.stderr);
    assert.equal(await on('alpha', 'cat /usr/share/berth-test-bits/content'), 'second\n');
  });
});
