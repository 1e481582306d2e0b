/**
 * An owner a module names that its package makes: on a fresh machine the user is not
 * there at the preview, so it is looked up after the install instead of blocking. Two
 * .debs of the test's own, in a local apt repository this machine's apt is pointed at for
 * the test: one whose postinst adds a system user, one that adds none. Needs root, apt-get,
 * dpkg-deb and dpkg-scanpackages; skipped otherwise. The packages are purged, the user
 * removed and the repository's source and lists taken away after.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aptRepositoryUnavailable, buildAptRepository } from '../fleet/apt-repository.ts';
import { holdMachineApt } from '../helpers/machine-apt.ts';
import { makeWorld, type World } from '../helpers/world.ts';

const USER = 'berth-test-svc';
const MAKES_USER = 'berth-test-svc';
const MAKES_NONE = 'berth-test-nosvc';
const DIR = '/etc/berth-test-svc';
const SOURCE = '/etc/apt/sources.list.d/berth-test-owners.list';
const skip = aptRepositoryUnavailable() ?? false;

const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C' };

function purge() {
  // Only those installed: apt knows no other before or after the source is there.
  const installed = [MAKES_USER, MAKES_NONE].filter((name) => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format
    const format = '-f=${db:Status-Status}';
    const said = spawnSync('dpkg-query', ['-W', format, name], { encoding: 'utf8' });
    return said.stdout !== '' && said.stdout !== 'not-installed';
  });
  if (installed.length > 0)
    execFileSync('apt-get', ['purge', '-y', '-q', '-o', 'DPkg::Lock::Timeout=300', ...installed], {
      stdio: 'ignore',
      env: aptEnv,
    });
  execFileSync('sh', ['-c', `userdel ${USER} 2>/dev/null; groupdel ${USER} 2>/dev/null; true`]);
}

/** apt's lists of the one source the test adds; the machine's other lists are left as they are. */
function updateOwnSource() {
  execFileSync(
    'apt-get',
    [
      'update',
      '-q',
      '-o',
      `Dir::Etc::sourcelist=${SOURCE}`,
      '-o',
      'Dir::Etc::sourceparts=-',
      '-o',
      'APT::Get::List-Cleanup=0',
      '-o',
      'DPkg::Lock::Timeout=300',
    ],
    { stdio: 'ignore', env: aptEnv },
  );
}

function hasUser(name: string): boolean {
  try {
    execFileSync('getent', ['passwd', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('owners made by the packages a module installs', { skip }, () => {
  let release: (() => Promise<void>) | undefined;
  let world: World;
  let repository = '';
  const file = (name: string) => ({
    [join(DIR, name)]: { content: 'hi\n', owner: USER, group: USER, mode: '0640' },
  });
  before(async () => {
    release = await holdMachineApt();
    const built = await buildAptRepository(
      [],
      [
        {
          name: MAKES_USER,
          version: '1.0',
          postinst: `#!/bin/sh\nset -e\ngetent passwd ${USER} >/dev/null || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin ${USER}\n`,
        },
        { name: MAKES_NONE, version: '1.0' },
      ],
    );
    if (typeof built !== 'string') throw new Error(built.skip);
    repository = built;
    purge();
    await writeFile(SOURCE, `deb [trusted=yes] file:${repository} ./\n`);
    updateOwnSource();
    world = await makeWorld({
      svc: { packages: [MAKES_USER], files: file('conf') },
      nosvc: { packages: [MAKES_NONE], files: file('other') },
    });
    await world.writeSettings({ nodes: { here: { root: '/' } } });
    await rm(DIR, { recursive: true, force: true });
  });
  after(async () => {
    try {
      purge();
    } finally {
      await rm(SOURCE, { force: true });
    }
    // The lists apt fetched from the test's repository go with it (their names spell its path).
    const spelled = `${repository.slice(1).replaceAll('/', '_')}_`;
    for (const name of readdirSync('/var/lib/apt/lists'))
      if (repository && name.includes(spelled))
        await rm(join('/var/lib/apt/lists', name), { force: true });
    await rm(DIR, { recursive: true, force: true });
    if (repository) await rm(repository, { recursive: true, force: true });
    await world?.cleanup();
    await release?.();
  });

  it('the preview defers the unknown owner to after the install; the act writes the file as the new user', async () => {
    assert.equal(hasUser(USER), false);
    assert.equal((await world.berth('assign', 'here', 'svc')).code, 0);
    const preview = await world.berth('converge', 'here');
    assert.equal(preview.code, 0, preview.stderr);
    assert.doesNotMatch(preview.stdout, /blocked/);
    assert.match(preview.stdout, new RegExp(`install package ${MAKES_USER} 1\\.0\n`));
    assert.match(
      preview.stdout,
      new RegExp(`owner ${USER}: made by its packages, looked up after they are installed`),
    );
    assert.match(
      preview.stdout,
      new RegExp(`group ${USER}: made by its packages, looked up after they are installed`),
    );
    const act = await world.actOn(preview, '--lock-timeout', '5m', 'converge', 'here');
    assert.equal(act.code, 0, act.stderr);
    const uid = Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', USER], { encoding: 'utf8' }));
    const made = await stat(join(DIR, 'conf'));
    assert.deepEqual([made.uid, made.gid, made.mode & 0o777], [uid, gid, 0o640]);
    assert.equal((await world.berth('unassign', 'here', 'svc')).code, 0);
    const release = await world.berth('converge', 'here');
    assert.equal((await world.actOn(release, 'converge', 'here')).code, 0);
    purge();
    await rm(DIR, { recursive: true, force: true });
  });

  it('a package that does not make the owner fails the act in words, with nothing of the module written', async () => {
    assert.equal((await world.berth('assign', 'here', 'nosvc')).code, 0);
    const preview = await world.berth('converge', 'here');
    assert.equal(preview.code, 0, preview.stderr);
    assert.doesNotMatch(preview.stdout, /blocked/);
    const act = await world.actOn(preview, '--lock-timeout', '5m', 'converge', 'here');
    assert.equal(act.code, 1);
    assert.match(
      act.stderr,
      new RegExp(
        `converge of here stopped at nosvc: ${MAKES_NONE} installed, but here still has no user ${USER}, no group ${USER}`,
      ),
    );
    assert.equal(existsSync(join(DIR, 'other')), false);
    // Managed before its first change: the next converge carries it on.
    const state = await world.readState();
    assert.deepEqual(Object.keys(state.managed?.here ?? {}), ['nosvc']);
  });
});
