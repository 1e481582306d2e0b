/**
 * Package lists that age by rule, and packages a definition names absent, over ssh on fresh
 * fleet hosts, through the real binary, with apt pointed at a local repository of real
 * .debs and .debs the test builds with dpkg-deb (tests/fleet/apt-repository.ts): berth.json's
 * refresh_after has lists older than it refreshed as the act's first step; a pin lists
 * refreshed just now lack is not sent to another refresh; `"state": "absent"` removes a
 * package and keeps its configuration, `purge` removes that too, and a removal apt would
 * widen to another package is refused. Skipped, saying why, where the fleet cannot run.
 */
import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestOf, makeWorld, type Run, type World } from '../helpers/world.ts';
import { buildAptRepository } from './apt-repository.ts';
import { berthIn, type Fleet, fleetUnavailable, onHost } from './fleet.ts';
import { type PackageFleet, packageFleet } from './package-fleet.ts';

const CONF = '/etc/berth-test-conf.conf';

const unavailable = fleetUnavailable();
const repository = unavailable
  ? { skip: unavailable }
  : await buildAptRepository(
      ['hello'],
      [
        { name: 'berth-test-conf', version: '1.0', files: { [CONF]: 'kept\n' } },
        { name: 'berth-test-needs-conf', version: '1.0', depends: 'berth-test-conf' },
      ],
    );
const skip = typeof repository === 'string' ? false : repository.skip;

const SETTINGS = {
  nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: 'bravo', sudo: true } },
  sshConfig: 'ssh_config',
};

describe('package lists that age by rule, and packages absent', { skip, timeout: 300_000 }, () => {
  let held: PackageFleet | undefined;
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  const berth = (...args: string[]): Promise<Run> => berthIn(world.state, runtime, args);
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  const status = async (host: string, name: string) =>
    (
      await fleet
        .host(host)
        .exec(`dpkg-query -W -f='\${db:Status-Status}' ${name} 2>/dev/null || echo gone`)
    ).stdout;
  const previewed = async (node: string, ...options: string[]) => {
    const said = await berth('--lock-timeout', '1m', 'converge', node, ...options);
    assert.equal(said.code, 0, said.stderr);
    return said;
  };
  const acted = async (node: string, preview: Run) => {
    const done = await berth(
      '--lock-timeout',
      '1m',
      'converge',
      node,
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    );
    assert.equal(done.code, 0, done.stdout + done.stderr);
    return done;
  };

  before(async () => {
    held = await packageFleet({ hosts: 2, repository: repository as string });
    ({ fleet, runtime } = held);
    await on(
      'bravo',
      'DEBIAN_FRONTEND=noninteractive apt-get purge -y -q hello >/dev/null 2>&1; true',
    );
    world = await makeWorld({
      greet: { packages: ['hello'], files: { '/etc/berth-test/greeting': { content: 'hi\n' } } },
      pinned: { packages: [{ name: 'hello', version: '2.10-2' }] },
      tidy: { packages: [{ name: 'berth-test-conf', state: 'absent' }] },
    });
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings(SETTINGS);
  });
  after(async () => {
    await world?.cleanup();
    await held?.stop();
  });

  it("lists older than berth.json's refresh_after are refreshed as the act's first step, named in the preview", async () => {
    await world.writeSettings({ ...SETTINGS, refresh_after: '1d' });
    try {
      await on('bravo', "touch -d '3 days ago' /var/lib/apt/lists");
      assert.equal((await berth('assign', 'bravo', 'greet')).code, 0);
      const preview = await previewed('bravo');
      assert.match(
        preview.stdout,
        /^install greet:\n {2}record that berth manages it\n {2}refresh bravo's package lists first \(apt-get update\): they are 3d old, and berth\.json's refresh_after is 1d\n {2}install package hello at the version its refreshed lists offer\n/m,
      );
      assert.doesNotMatch(preview.stdout, /lists are \d+ days? old/);
      const done = await acted('bravo', preview);
      assert.match(
        done.stdout,
        /^berth manages greet on bravo\nrefreshed bravo's package lists \(apt-get update\)\ninstalled package hello 2\.10-3\n/,
      );
      assert.equal(await status('bravo', 'hello'), 'installed');
      const age = Number(
        await on('bravo', 'echo $(( $(date +%s) - $(stat -c %Y /var/lib/apt/lists) ))'),
      );
      assert.ok(age < 300, `the lists were refreshed ${age} s ago`);
      assert.match((await previewed('bravo')).stdout, /bravo is as assigned: nothing to do/);
      assert.equal((await berth('unassign', 'bravo', 'greet')).code, 0);
      await acted('bravo', await previewed('bravo'));
    } finally {
      await world.writeSettings(SETTINGS);
    }
  });

  it('a pin the lists lack right after --refresh is not sent to another refresh', async () => {
    assert.equal((await berth('assign', 'bravo', 'pinned')).code, 0);
    const preview = await previewed('bravo', '--refresh');
    assert.match(
      preview.stdout,
      /\nblocked: hello 2\.10-2 is not in bravo's package lists \(they offer 2\.10-3\); they were refreshed just now: pin a version they offer, or add a source that offers this one\n/,
    );
    assert.doesNotMatch(preview.stdout, /refresh them with/);
    assert.equal((await berth('unassign', 'bravo', 'pinned')).code, 0);
  });

  it('a package absent is removed, its configuration kept; purged when asked; a removal apt would widen is refused', async () => {
    await on(
      'alpha',
      'DEBIAN_FRONTEND=noninteractive apt-get install -y -q berth-test-conf berth-test-needs-conf >/dev/null',
    );
    assert.equal((await berth('assign', 'alpha', 'tidy')).code, 0);
    const widened = await previewed('alpha');
    assert.match(
      widened.stdout,
      /\nblocked: apt on alpha would not install tidy's packages: it would remove berth-test-needs-conf too, and berth removes only a package a definition names absent\n/,
    );
    assert.equal(
      (await berth('converge', 'alpha', '--yes', '--digest', digestOf(widened.stdout))).code,
      1,
    );
    assert.equal(await status('alpha', 'berth-test-needs-conf'), 'installed');

    await on(
      'alpha',
      'DEBIAN_FRONTEND=noninteractive apt-get purge -y -q berth-test-needs-conf >/dev/null',
    );
    const removing = await previewed('alpha');
    assert.match(
      removing.stdout,
      /^install tidy:\n {2}record that berth manages it\n {2}remove package berth-test-conf 1\.0 \(its configuration stays\)\n/m,
    );
    const removed = await acted('alpha', removing);
    assert.match(
      removed.stdout,
      /\nremoved package berth-test-conf 1\.0 \(its configuration stays\)\n/,
    );
    assert.equal(await status('alpha', 'berth-test-conf'), 'config-files');
    assert.equal(await on('alpha', `cat ${CONF}`), 'kept\n');
    assert.match((await previewed('alpha')).stdout, /alpha is as assigned: nothing to do/);

    await world.writeModule('tidy', {
      packages: [{ name: 'berth-test-conf', state: 'absent', purge: true }],
    });
    const purging = await previewed('alpha');
    assert.match(
      purging.stdout,
      /^update tidy:\n {2}purge package berth-test-conf 1\.0 \(its configuration too\)\n/m,
    );
    await acted('alpha', purging);
    assert.match(await status('alpha', 'berth-test-conf'), /^(not-installed|gone\n)$/);
    assert.equal((await fleet.host('alpha').exec(`test -e ${CONF}`)).code, 1);
    assert.match((await previewed('alpha')).stdout, /alpha is as assigned: nothing to do/);
  });
});
